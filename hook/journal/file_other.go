//go:build !unix

package journal

import (
	"fmt"
	"io/fs"
)

// noFollow: no O_NOFOLLOW where unix is not; owned then checks the file
// as opened (this build is not supported for hooks).
const noFollow = 0

func owned(fi fs.FileInfo) (why string, linked bool) {
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()), false
	}
	return "", false
}
