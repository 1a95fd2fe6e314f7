package fs

import "testing"

// FuzzParsePatch: any text parses or fails without a panic, and a patch
// that parses applies to any content or fails without a panic.
func FuzzParsePatch(f *testing.F) {
	for _, tc := range patchCases {
		f.Add(tc.patch, patchTree["a.txt"])
	}
	f.Fuzz(func(t *testing.T, patch, content string) {
		files, err := parsePatch(patch)
		if err != nil {
			return
		}
		_ = sameFiles(patch, files)
		for _, fp := range files {
			if fp.name() == "" || fp.name() == devNull {
				t.Fatalf("part at line %d has no name", fp.line)
			}
			_, _, _ = applyHunks(fp, content)
		}
	})
}
