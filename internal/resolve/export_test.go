package resolve

import "path/filepath"

// PathUncached is Path as it was before Resolver: filepath.EvalSymlinks of
// the whole prefix at every step, nothing remembered. The tests hold a
// Resolver's answers against it.
func PathUncached(p string) string { return walk(p, filepath.EvalSymlinks) }

// ReadIndexNames is readIndexNames, for the tests.
var ReadIndexNames = readIndexNames
