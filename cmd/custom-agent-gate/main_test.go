package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, strings.NewReader(""), &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut.String())
		}
		if want := "custom-agent-gate " + buildinfo.Version() + "\n"; out.String() != want {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"run", "hello"}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("custom-agent-gate run: exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `unknown command "run"`) {
		t.Errorf("custom-agent-gate run: %q", errOut.String())
	}
}
