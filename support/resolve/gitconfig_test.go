package resolve_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/support/resolve"
	"pgregory.net/rapid"
)

// gitConfigPieces are the parts configurations are drawn from: the forms
// git's parser treats specially (a byte order mark, quoted subsections
// with "]" and escapes, the old [section.sub] form, a key after its
// header on one line, quoted values holding comment characters, escapes,
// continued lines, CR LF, comments, blanks), and broken ones.
var gitConfigPieces = []string{
	"\xef\xbb\xbf", "\xef\xbb", "[core]", "[Core]", "[ core ]", "[core ]", "[diff \"a]b\"]", "[diff \"x\\\"y\"]",
	"[diff \"p\\q\"]", "[filter \"lfs\"]", "[a.B]", "[core.sub]", "[diff\t\"t\"]", "[diff \"unterminated]", "[core",
	"[]", "[c-d]", "[c_d]", "fsmonitor", "FsMonitor", "textconv", "clean", "worktree", "x-y", "k2", "2k", " = ", "=",
	"\t", " ", "value", "\"quoted ; # value\"", "\"open", "a\\", "b\\t", "\\n", "\\\"", "\\\\", "\\q", " # comment",
	" ; comment", "#", ";", "\"", "]", "\n", "\n", "\n", "\r\n", "\r", "\x00", "é", "\v", "\f", "\t\v",
}

// TestParseGitConfigAgreesWithGit holds the gate's reading of a
// configuration against git's own: for each configuration drawn, git
// config --list prints exactly the variables the gate sees, and when git
// refuses the file the gate does too (git would then run nothing, and the
// gate asks). A file holding a NUL, which git reads cut short, the gate
// refuses.
func TestParseGitConfigAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(gitConfigPieces), 0, 24).Draw(rt, "pieces") {
			b.WriteString(p)
		}
		text := b.String()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			rt.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", file, "--no-includes", "--list", "-z")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		gitErr := cmd.Run()
		got, err := resolve.GitConfigList([]byte(text))
		switch {
		case strings.Contains(text, "\x00"):
			if err == nil {
				rt.Fatalf("%q holds a NUL, and the gate reads it as %q", text, got)
			}
		case gitErr != nil && err == nil:
			rt.Fatalf("git refuses %q (%v), the gate reads %q", text, gitErr, got)
		case gitErr == nil && err != nil:
			rt.Fatalf("git reads %q as %q, the gate refuses it: %v", text, stdout.String(), err)
		case gitErr == nil && got != stdout.String():
			rt.Fatalf("%q: git reads %q, the gate %q", text, stdout.String(), got)
		}
	})
}
