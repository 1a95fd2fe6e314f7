//go:build !linux

package journal

import "os"

// datasync syncs f (fsync where fdatasync is not offered).
func datasync(f *os.File) error { return f.Sync() }

// placeNew gives the file at tmp the name path unless path exists, and
// reports whether it did: by link and remove, so for a moment the file
// has two names (a hook that opens it then refuses it and tries again).
func placeNew(tmp, path string) (bool, error) { return linkNew(tmp, path) }
