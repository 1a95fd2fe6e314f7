//go:build linux

package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/support/termtext"
	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// csi matches the terminal sequences the line editor draws the prompt
// with.
var csi = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]|\x1b\\][^\x07]*\x07")

// screenLines is what a terminal shows of out, line by line: sequences
// removed, and of a line redrawn after a carriage return only the last
// drawing.
func screenLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(csi.ReplaceAllString(out, ""), "\n") {
		l = strings.TrimRight(l, "\r")
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		lines = append(lines, l)
	}
	return lines
}

// TestChatCommandsFitANarrowTerminal: chat at a terminal 40 columns wide
// prints /help and /permissions wrapped at words: no line wider than the
// terminal, and the words those commands print without a terminal, whole
// and in the same order (issue 24 item 8).
func TestChatCommandsFitANarrowTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs chat in a pseudo-terminal")
	}
	const cols = 40
	data, cwd, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	m := writeScript(t, `{"text":"never asked"}`+"\n")
	env := []string{"CUSTOM_AGENT_DATA_DIR=" + data, "XDG_CONFIG_HOME=" + cfg}
	p, wait := chatOnPTY(t, cwd, env, "chat", "--model", "script:"+m, "--cwd", cwd)
	if err := p.Resize(cols, 40); err != nil {
		t.Fatal(err)
	}
	at := waitAfter(t, p, 0, "› ")
	p.Type(t, "/help\r")
	at = waitAfter(t, p, at, "removed)")
	at = waitAfter(t, p, at, "› ")
	p.Type(t, "/permissions\r")
	at = waitAfter(t, p, at, "identical")
	at = waitAfter(t, p, at, "› ")
	p.Type(t, "\x04")
	if err := wait(); err != nil {
		t.Fatalf("chat exited with %v:\n%s", err, p.Output())
	}
	var shown []string
	in := false
	for _, l := range screenLines(p.Output()[:at]) {
		switch {
		case strings.HasPrefix(l, "› /help"), strings.HasPrefix(l, "› /permissions"):
			in = true
			continue
		case strings.HasPrefix(l, "› "):
			in = false
		}
		if !in {
			continue
		}
		if w := termtext.Width(l); w > cols {
			t.Errorf("line %q is %d columns wide, more than %d", l, w, cols)
		}
		shown = append(shown, l)
	}
	if len(shown) < 10 {
		t.Fatalf("too little of /help and /permissions seen:\n%s", strings.Join(shown, "\n"))
	}
	t.Setenv("XDG_CONFIG_HOME", cfg) // the same configuration, without a terminal
	_, wide, err := runWithInput(t, "/help\n/permissions\n", "--data-dir", data, "chat", "--model", "script:"+m, "--cwd", cwd)
	if err != nil {
		t.Fatal(err)
	}
	// The words shown are a run of the words printed without a terminal,
	// whole, but for a word wider than a line, cut to end in "…".
	got, all := strings.Fields(strings.Join(shown, "\n")), strings.Fields(wide)
	start := slices.Index(all, got[0])
	if start < 0 || len(all)-start < len(got) {
		t.Fatalf("the words at %d columns are not those without a terminal:\n%s\n--- without a terminal:\n%s", cols, strings.Join(shown, "\n"), wide)
	}
	for k, w := range got {
		want := all[start+k]
		cut := strings.HasSuffix(w, "…") && strings.HasPrefix(want, strings.TrimSuffix(w, "…")) && termtext.Width(want) > cols/2
		if w != want && !cut {
			t.Fatalf("word %d at %d columns is %q, without a terminal %q (split?):\n%s", k, cols, w, want, strings.Join(shown, "\n"))
		}
	}
}

// columns reads a terminal's width, and gives no limit for what is not a
// terminal, so that a file or a pipe gets whole lines.
func TestColumns(t *testing.T) {
	p := ptytest.Open(t)
	if err := p.Resize(40, 20); err != nil {
		t.Fatal(err)
	}
	slave, err := p.OpenSlave()
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	if got := columns(slave); got != 40 {
		t.Errorf("columns(a terminal 40 wide) = %d", got)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := columns(f); got != 0 {
		t.Errorf("columns(a file) = %d, want 0", got)
	}
	if got := columns(&strings.Builder{}); got != 0 {
		t.Errorf("columns(a buffer) = %d, want 0", got)
	}
}
