package datadir

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ServeTokenGlob matches the script token files serve writes in the data
// directory, one per port (serve-PORT.token).
const ServeTokenGlob = "serve-*.token"

// maxTokenFile bounds what is read of one token file; serve's are 64 hex
// digits and a newline.
const maxTokenFile = 4096

// ServeTokens returns the script tokens of the serve instances that wrote
// a token file in dir, for masking: a tool's output that shows one (a
// `cat` of the file through a path the engine did not know, an
// environment dump, a script's log) gets it hidden. A file of a serve
// that ended may remain; its token is hidden too, which costs nothing. A
// file that cannot be read, or is not a regular file, is skipped. It
// reads the file system, so it is for the runner, never the engine.
func ServeTokens(dir string) []string {
	if dir == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, ServeTokenGlob))
	var out []string
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, maxTokenFile))
		f.Close()
		if err != nil {
			continue
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			out = append(out, t)
		}
	}
	return out
}
