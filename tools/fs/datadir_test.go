package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/tool"
)

// TestTreeToolsSkipTheDataDir (fourth serve review, finding 1): a data
// directory inside the working directory (`serve --data-dir ./cadata`, or
// `--cwd $HOME` with the default one) holds serve's script token and the
// raw outputs kept for read_output. The engine judges list_files and
// search_text by their path argument, the working directory, and allows
// them; the walk itself must not enter the data directory, whose location
// the tool learns from the call (tool.Call.DataDir, Home), as the engine
// does. Each tree tool, each form of the data directory.
func TestTreeToolsSkipTheDataDir(t *testing.T) {
	t.Parallel()
	const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
	cases := []struct {
		name    string
		dir     string // the data directory, relative to the working directory
		custom  bool   // given to the call as DataDir; else the default under Home
		viaLink bool   // the working directory is named through a symbolic link
	}{
		{"visible", "cadata", true, false},
		{"hidden", ".cadata", true, false},
		{"nested", "sub/.state/ca", true, false},
		{"cwd through a link", "cadata", true, true},
		{"default under home", ".local/share/custom-agent", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			real := t.TempDir()
			makeTree(t, real, map[string]string{
				"src/main.go":                       "package main // " + "visible\n",
				tc.dir + "/serve-7717.token":        token + "\n",
				tc.dir + "/sha256/ab/cdef0123":      "ARTIFACT_SECRET=raw output\n",
				tc.dir + "/events.db":               "EVENTS_SECRET\n",
				tc.dir + "/nested/deeper/notes.txt": "DEEP_SECRET\n",
				tc.dir + "_beside":                  "a file beside it, not the data dir: visible\n",
			})
			cwd := real
			if tc.viaLink {
				cwd = filepath.Join(t.TempDir(), "link")
				if err := os.Symlink(real, cwd); err != nil {
					t.Fatal(err)
				}
			}
			call := tool.Call{ID: "c1", Cwd: cwd, Home: t.TempDir()}
			if tc.custom {
				// The executor gives the data directory with its links
				// resolved (datadir.Real).
				call.DataDir = filepath.Join(real, filepath.FromSlash(tc.dir))
			} else {
				call.Home = real
			}
			shown := strings.TrimSuffix(tc.dir, "/")

			call.Args = map[string]any{"pattern": ".", "path": "."}
			got := runCall(t, &SearchText{}, call)
			for _, s := range []string{token[:16], "ARTIFACT_SECRET", "EVENTS_SECRET", "DEEP_SECRET", shown + "/"} {
				if strings.Contains(got, s) {
					t.Errorf("search_text output holds %q from the data directory:\n%s", s, got)
				}
			}
			if !strings.Contains(got, "src/main.go:1:") || !strings.Contains(got, "visible\n") {
				t.Errorf("search_text left out the project:\n%s", got)
			}
			if want := "[not searched: " + shown + ", custom-agent's own data directory"; !strings.Contains(got, want) {
				t.Errorf("search_text output lacks the note %q:\n%s", want, got)
			}

			call.Args = map[string]any{"path": "."}
			got = runCall(t, &ListFiles{}, call)
			for _, s := range []string{"serve-7717.token", "sha256", "events.db", "deeper"} {
				if strings.Contains(got, s) {
					t.Errorf("list_files output names %q inside the data directory:\n%s", s, got)
				}
			}
			if !strings.Contains(got, "\n"+shown+"/\n") && !strings.HasPrefix(got, shown+"/\n") {
				t.Errorf("list_files does not list the data directory itself:\n%s", got)
			}
			if want := "[contents not listed: " + shown + ", custom-agent's own data directory"; !strings.Contains(got, want) {
				t.Errorf("list_files output lacks the note %q:\n%s", want, got)
			}
		})
	}
}

// TestTreeToolsInsideTheDataDir: a walk a person allowed of the data
// directory itself (the engine asks for it) lists it; only the walks that
// meet it from outside leave it out.
func TestTreeToolsInsideTheDataDir(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	makeTree(t, cwd, map[string]string{"cadata/sha256/ab/cd": "x\n"})
	call := tool.Call{ID: "c1", Cwd: cwd, DataDir: filepath.Join(cwd, "cadata"), Args: map[string]any{"path": "cadata"}}
	got := runCall(t, &ListFiles{}, call)
	if !strings.Contains(got, "cadata/sha256/ab/cd\n") {
		t.Errorf("list_files of the data directory itself:\n%s", got)
	}
}

// runCall runs tl with call and returns its stdout; a failure fails the
// test.
func runCall(t *testing.T, tl tool.Tool, call tool.Call) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if _, err := tl.Run(context.Background(), call, tool.Output{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("%s: %v", tl.Info().Name, err)
	}
	return stdout.String()
}
