// Package puritytest checks that a package of the pure core imports nothing
// that does I/O, reads the clock or reaches the network, so the rings of
// STYLE.md §3 are enforced by a test rather than by review.
package puritytest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Forbidden are the import paths a pure package must not use. net/url and
// net/netip are pure parsers and allowed; "time" is allowed for its types,
// but calls of time.Now are reported separately.
var Forbidden = []string{
	"os", "os/exec", "os/signal", "os/user", "net", "net/http", "io/fs",
	"io/ioutil", "syscall", "database/sql", "path/filepath", "unsafe",
	"math/rand", "math/rand/v2", "crypto/rand", "runtime",
}

// Check fails t if any non-test .go file in dir imports a forbidden package
// or mentions time.Now.
func Check(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	bad := make(map[string]bool, len(Forbidden))
	for _, f := range Forbidden {
		bad[f] = true
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if bad[p] {
				t.Errorf("%s imports %q; the package must stay pure", filepath.Base(f), p)
			}
		}
		if strings.Contains(string(src), "time.Now") {
			t.Errorf("%s reads the clock (time.Now); pass the time in instead", filepath.Base(f))
		}
	}
}
