package shellrisk

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure fails when a non-test file of the package imports anything that
// reaches the world: the analyser must stay a pure function.
func TestPure(t *testing.T) {
	t.Parallel()
	forbidden := map[string]bool{"os": true, "os/exec": true, "net": true, "net/http": true, "io/fs": true,
		"syscall": true, "time": true, "math/rand": true, "math/rand/v2": true, "unsafe": true,
		"mvdan.cc/sh/v3/interp": true, "mvdan.cc/sh/v3/expand": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[p] {
				t.Errorf("%s imports %s; shellrisk must stay pure", name, p)
			}
		}
	}
}
