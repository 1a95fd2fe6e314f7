// Differential test of the analyser against real bash.
//
// # Why
//
// Analyze parses with mvdan.cc/sh, not with bash. Wherever the two read the
// same bytes differently (a CR before '#', backslash-CR-LF, a NUL in $'…', a
// comment ending in a backslash, ...) a command bash runs can be missing from
// Result.Commands, and an allow rule for the first command then covers it
// (issue 9 §1, issue 15, whitebox review A1, A2, A5). This test asks bash
// itself which simple commands it would run, and fails when one of them is
// not among the analyser's Result.Commands and the Result is not Opaque.
//
// # The oracle
//
// Each input runs as `bash --norc --noprofile -c PREAMBLE\nINPUT`, the way
// tools/proc runs a shell call (bash -c), with an empty environment (HOME is
// a fresh directory, PATH a fresh empty directory, LANG=C.UTF-8), stdin from
// /dev/null, in a fresh t.TempDir(), in its own process group, with a 2 s
// wall-clock timeout and ulimits on CPU time, memory, file size and core
// dumps. bash -c parses and runs one command at a time, so the preamble has
// installed the trap before a byte of the input is parsed. The preamble:
//
//   - `shopt -s extdebug` and a DEBUG trap. The trap runs before every simple
//     command (and before for, case, select, ((…)) and [[…]]), writes
//     $BASH_COMMAND (the command's text as bash parsed it, before expansion,
//     aliases already expanded) to fd 3, and returns 1, which under extdebug
//     skips the command: its words are not expanded and its redirections are
//     not performed (checked by TestDifferentialOracle). extdebug has to be
//     set by a command: set in a BASH_ENV file or with -O, bash tries to load
//     the bashdb debugger, fails, and silently disables the skipping.
//   - `set -T` (functrace), so that subshells, pipelines, command and process
//     substitutions and functions inherit the trap.
//   - `set -o noclobber`, so that a redirection on a compound command (which
//     bash performs without any DEBUG trap, e.g. `{ …; } > f`) cannot
//     truncate an existing file; inputs holding `>|` or `>>` are not run.
//   - A command_not_found_handle that writes its arguments to fd 3. PATH is
//     an empty directory, so a command name without a slash that is no
//     builtin, function, alias, keyword or hashed path is not found anywhere:
//     for such a command (when its text has no redirection and no expansion
//     that evaluates text: `${`, `$((`, `$[`) the trap lets bash go on, bash
//     expands the words (command substitutions in them are trapped in turn),
//     finds nothing and calls the handler, which records the expanded argv
//     and returns 127. That is how `||` branches are reached and how
//     `MARK_1 $(MARK_2)` reports both.
//   - `true`, `false`, `:`, `break` and `continue` without arguments run
//     (harmless; they steer `&&`, `||`, `if` and loops the way bash would). for, case and select
//     headers run so that their bodies are traversed.
//   - For every skipped simple command whose first word (after leading
//     assignments) is static (quotes, backslashes, $'…', no other
//     expansion) the trap evaluates that word alone, the way bash would (NUL
//     cutting of $'…' included), and records it: `r$'\0'm -rf x` is `rm`.
//     A first word that is `$name` or `${name}` of a plain variable or a
//     nameref to one is resolved too (`declare -n x=ls; $x`).
//   - Only for inputs without `>`, without numeric backslash escapes (`\0`,
//     `\x`, `\u`, `\U`) and without printf's %b or %c, which could assemble a
//     redirection at run time: pure assignments, ((…)), [[…]], declare and
//     typeset with static options, printf -v, mapfile/readarray -C with a
//     here-string, eval of static words, `shopt -s` of a few harmless
//     options and `alias` run as well, since they are where bash evaluates
//     text again (issue 15 "Text bash evaluates again", A3, A4). Code they
//     evaluate is trapped like any other.
//   - A cap of 5000 trapped commands per shell (loops: a skipped command
//     returns 0, so `while true` spins).
//
// TestDifferentialOracle runs canaries first: a command with an absolute
// path, exec, a redirection and `trap - DEBUG` must not touch the directory,
// and the known bypasses must make bash report the hidden command.
//
// # Comparison
//
// The names bash would run are the handler's argv[0] and the evaluated first
// words, reduced to their base name like Command.Argv[0]. Each must be the
// Argv[0] of some command in Result.Commands, or the Result is Opaque.
// Transparent wrappers (env, nice, timeout, command, exec, time, xargs, ...)
// are not compared: the analyser lists what they run instead, and bash (which
// runs no program here) cannot tell what that is. Empty names are ignored
// (bash runs nothing). Assignments, ((…)), [[…]] and for/case/select headers
// name no program.
//
// # Limits (what bash reports is a lower bound)
//
//   - A skipped command's words are not expanded, so a command substitution
//     in the arguments of anything but a not-found program (a builtin, a
//     redirected command, cat <<EOF with $(…) in the body) is never seen.
//   - Functions are defined but not called (a call is skipped): their bodies
//     are never seen by bash. The analyser walks bodies statically anyway.
//   - A skipped command returns 0, so `x || y` after a skipped x never
//     reaches y, and `if x; then y; fi` reaches y even if x would fail.
//   - trap handlers are never installed: bash does not run the DEBUG trap
//     inside an EXIT trap, so `trap 'cmd' EXIT` could not be skipped.
//   - No program runs, so code they would run (bash -s, sh -c, xargs,
//     env --u X prog, python -c) is not seen; nor is what bash -c would do
//     with the real user's environment, aliases or PATH.
//   - Dynamic program names other than a plain $var are not resolved.
//
// # Inputs and known disagreements
//
// Every shell command in permission/testdata/corpus*.jsonl and
// permission/testdata/corpus/*.jsonl, the generator below (the risky
// constructs of issue 15, each hiding a harmless MARK_<n>), and the lines of
// testdata/differential-known.txt. That file lists the disagreements known
// today, one Go-quoted input per line: they are logged, not failed, and a
// listed input that no longer disagrees fails ("fixed: remove it from the
// list"), so the list only shrinks. FuzzDifferential runs the same check;
// plain `go test` runs its seeds, `go test -fuzz FuzzDifferential` explores.
//
// The test skips only when bash is missing and CI is not "true".
package shellrisk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// diffPreamble is run by bash before the input; see the file comment.
// @WORD@ is replaced by the regular expression of a static word, @EVAL@ by
// 1 when the input may evaluate text (see evalSafe).
const diffPreamble = `ulimit -t 2 -v 1048576 -f 1024 -c 0 2>/dev/null
shopt -s extdebug
set -T -o noclobber
__dt_n=0 __dt_eval=@EVAL@
__dt_word='@WORD@'
__dt_asg='[A-Za-z_][A-Za-z0-9_]*(\[[^] ]*\])?\+?=([^ '"'"'"\\$()@BQ@]|\$[^ '"'"'"()]|\$$|'"'"'[^'"'"']*'"'"'|"([^"\\$@BQ@]|\\.)*"|\\.)*'
__dt_first="^(($__dt_asg) )*($__dt_word)( |\$)"
__dt_var='^\$(\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))( |$)'
__dt_tok='([^ '"'"'"\\$<>]|\$[^ '"'"'"<>]|\$$|'"'"'[^'"'"']*'"'"'|"([^"\\]|\\.)*"|\\.)+'
__dt_static="^$__dt_word\$"
command_not_found_handle() { printf 'C%s\0' "$#" "$@" >&3; return 127; }
__dt_trap() {
  [[ ${FUNCNAME[1]} == command_not_found_handle ]] && return 0
  (( ++__dt_n > 5000 )) && exit 99
  local c=$BASH_COMMAND w= a= rest= t
  printf 'T%s\0' "$c" >&3
  case $c in
  true|false|:|break|continue) return 0 ;;
  'for '*|'case '*|'select '*) return 0 ;;
  '(('*|'[[ '*) ((__dt_eval)) && return 0; return 1 ;;
  esac
  if [[ $c =~ $__dt_first ]]; then
    a=${BASH_REMATCH[1]} w=${BASH_REMATCH[6]} rest=${c:${#BASH_REMATCH[0]}}
    eval "w=( $w )" 2>/dev/null || w=
  elif [[ $c =~ $__dt_var ]]; then
    t=${BASH_REMATCH[2]}${BASH_REMATCH[3]} rest=${c:${#BASH_REMATCH[0]}}
    if [[ -R $t ]]; then local -n __dt_ref=$t; t=${!__dt_ref}; fi
    if [[ $t =~ ^[A-Za-z_][A-Za-z0-9_]*$ && ! -R $t ]]; then w=( "${!t}" ); fi
    [[ $w == *' '* ]] && w=
  fi
  if [[ -n $w ]]; then
    printf 'W%s\0' "$w" >&3
    if [[ -z $a && $w =~ ^[A-Za-z_][A-Za-z0-9_.+-]*$ && $rest != *[\<\>]* && $rest != *'${'* && $rest != *'$(('* && $rest != *'$['* ]] && ! type -t -- "$w" >/dev/null 2>&1; then
      return 0
    fi
  fi
  ((__dt_eval)) || return 1
  [[ $c == *[\<\>\@BQ@]* && $c != 'mapfile '*'<<< '* && $c != 'readarray '*'<<< '* ]] && return 1
  local re="^($__dt_asg)( ($__dt_asg))*\$"
  [[ $c =~ $re ]] && return 0
  re="^(declare|typeset|local)( [-+][a-zA-Z]+)*( ($__dt_asg|[A-Za-z_][A-Za-z0-9_]*))+\$"
  [[ $c =~ $re ]] && return 0
  re="^printf -v [A-Za-z_][A-Za-z0-9_]*( $__dt_tok)+\$"
  [[ $c =~ $re ]] && return 0
  re="^(mapfile|readarray)( -[Cc] $__dt_tok)+( [A-Za-z_][A-Za-z0-9_]*)? <<< $__dt_tok\$"
  [[ $c =~ $re ]] && return 0
  re="^eval( ($__dt_word))+\$"
  [[ $c =~ $re ]] && return 0
  re='^shopt -s( (expand_aliases|extglob|nullglob|dotglob|globstar|nocaseglob|lastpipe))+$'
  [[ $c =~ $re ]] && return 0
  re="^alias( [A-Za-z_][A-Za-z0-9_.-]*=($__dt_word))+\$"
  [[ $c =~ $re ]] && return 0
  return 1
}
readonly -f __dt_trap command_not_found_handle
trap __dt_trap DEBUG
`

// diffWord is a static word: no expansion but quote removal, $'…', tilde
// and globbing (the directory is empty). No braces, no '=', no '('.
const diffWord = `(\$'([^'\\]|\\.)*'|'[^']*'|"[^"$` + "`" + `\\]*"|\\.|[][A-Za-z0-9_./+@%,:*?^~-])+`

// transparent lists the wrappers the analyser sees through without listing
// them (wrappers.go): bash reports the wrapper, the analyser what it runs.
var transparent = map[string]bool{
	"env": true, "nice": true, "ionice": true, "timeout": true, "gtimeout": true, "nohup": true,
	"stdbuf": true, "setsid": true, "unbuffer": true, "chrt": true, "taskset": true, "torsocks": true,
	"proxychains": true, "proxychains4": true, "caffeinate": true, "catchsegv": true, "unshare": true,
	"systemd-run": true, "firejail": true, "bwrap": true, "command": true, "builtin": true, "exec": true,
	"time": true, "xargs": true, "parallel": true, "watch": true,
}

// bashRun is what bash reported for one input.
type bashRun struct {
	texts []string // $BASH_COMMAND of every trapped command
	names []string // programs bash would run (base names)
	err   string   // why the run is incomplete, if it is
}

// ctlesc undoes bash's internal quoting of \x01 and \x7f, which
// $BASH_COMMAND shows (the expanded words hold them once).
var ctlesc = strings.NewReplacer("\x01\x01", "\x01", "\x01\x7f", "\x7f")

// declAssign is a declaration builtin that only assigns: the analyser
// treats it as the assignments it makes.
var declAssign = regexp.MustCompile(`^(declare|typeset|export|local|readonly)( [-+][A-Za-z]+)* [A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=`)

type oracle struct {
	bash, home, path string
	sem              chan struct{}
}

var (
	oracleOnce sync.Once
	theOracle  *oracle
	oracleErr  error
)

// getOracle finds bash and prepares the empty HOME and PATH directories,
// once per test binary.
func getOracle(tb testing.TB) *oracle {
	tb.Helper()
	oracleOnce.Do(func() {
		b, err := exec.LookPath("bash")
		if err != nil {
			oracleErr = err
			return
		}
		b, _ = filepath.Abs(b)
		dir, err := os.MkdirTemp("", "shellrisk-differential-")
		if err != nil {
			oracleErr = err
			return
		}
		o := &oracle{bash: b, home: filepath.Join(dir, "home"), path: filepath.Join(dir, "emptypath"), sem: make(chan struct{}, 2)}
		for _, d := range []string{o.home, o.path} {
			if err := os.Mkdir(d, 0o700); err != nil {
				oracleErr = err
				return
			}
		}
		theOracle = o
	})
	if oracleErr != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("the differential test needs bash in CI: %v", oracleErr)
		}
		tb.Skipf("no bash: %v", oracleErr)
	}
	return theOracle
}

var (
	numEscape   = regexp.MustCompile(`\\[0-7xuU]`)
	printfBC    = regexp.MustCompile(`%[-+ #0-9.*]*[bc]`)
	diffTimeout = 2 * time.Second
)

// runnable says why an input is not given to bash at all.
func runnable(cmd string) string {
	switch {
	case strings.IndexByte(cmd, 0) >= 0:
		return "holds a NUL byte, which bash -c cannot receive"
	case strings.Contains(cmd, ">|") || strings.Contains(cmd, ">>"):
		return "holds >| or >>, which on a compound command could write a file outside the sandbox"
	case len(cmd) > shellrisk.MaxInput:
		return "too long"
	}
	return ""
}

// evalSafe says whether the input may run the builtins that evaluate text:
// nothing in it can build a redirection at run time.
func evalSafe(cmd string) bool {
	return !strings.ContainsRune(cmd, '>') && !numEscape.MatchString(cmd) && !printfBC.MatchString(cmd)
}

func (o *oracle) preamble(cmd string) string {
	e := "0"
	if evalSafe(cmd) {
		e = "1"
	}
	p := strings.ReplaceAll(diffPreamble, "@WORD@", strings.ReplaceAll(diffWord, "'", `'"'"'`))
	return strings.NewReplacer("@EVAL@", e, "@BQ@", "`").Replace(p)
}

// run asks bash which commands cmd would run, in dir.
func (o *oracle) run(cmd, dir string) bashRun {
	o.sem <- struct{}{}
	defer func() { <-o.sem }()
	ctx, cancel := context.WithTimeout(context.Background(), diffTimeout)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return bashRun{err: err.Error()}
	}
	c := exec.CommandContext(ctx, o.bash, "--norc", "--noprofile", "-c", o.preamble(cmd)+"\n"+cmd)
	c.Dir = dir
	c.Env = []string{"HOME=" + o.home, "PATH=" + o.path, "LANG=C.UTF-8"}
	c.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	c.Stderr = &limited{b: &stderr, n: 4096}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		r.Close()
		w.Close()
		return bashRun{err: err.Error()}
	}
	w.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if out.Len() < 4<<20 {
				out.Write(buf[:n])
			} else {
				cancel()
			}
			if err != nil {
				return
			}
		}
	}()
	werr := c.Wait()
	// Background jobs may still hold fd 3: kill the group, then read on.
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(diffTimeout):
		r.Close()
		<-done
	}
	r.Close()
	res := parseRecords(out.Bytes())
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.err = "timed out or too much output"
	case werr != nil && !errors.As(werr, &ee):
		res.err = werr.Error()
	case ee != nil && ee.ExitCode() == 99 && len(res.texts) >= 5000:
		res.err = "more than 5000 commands"
	}
	return res
}

type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// parseRecords reads the trap's T (text), W (first word) and C (argv from
// the not-found handler) records.
func parseRecords(b []byte) bashRun {
	var res bashRun
	f := bytes.Split(b, []byte{0})
	for i := 0; i < len(f); i++ {
		s := string(f[i])
		if s == "" {
			continue
		}
		switch s[0] {
		case 'T':
			res.texts = append(res.texts, s[1:])
		case 'W':
			if len(res.texts) > 0 && declAssign.MatchString(res.texts[len(res.texts)-1]) {
				continue
			}
			res.names = append(res.names, path.Base(ctlesc.Replace(s[1:])))
		case 'C':
			n, err := strconv.Atoi(s[1:])
			if err != nil || n < 1 || i+n >= len(f) {
				continue
			}
			res.names = append(res.names, path.Base(strings.TrimPrefix(string(f[i+1]), "C")))
			i += n
		}
	}
	return res
}

// disagreement compares bash's run with the analyser's Result; "" means
// they agree.
func disagreement(cmd string, br bashRun) string {
	res := shellrisk.Analyze(cmd, shellrisk.Env{Cwd: "/home/u/proj", Home: "/home/u"})
	if res.Opaque {
		return ""
	}
	seen := map[string]bool{}
	var saw []string
	for _, c := range res.Commands {
		if len(c.Argv) > 0 {
			seen[path.Base(c.Argv[0])] = true
			saw = append(saw, strings.Join(c.Argv, " "))
		}
	}
	var missing []string
	for _, n := range br.names {
		if n == "" || n == "." || transparent[n] || seen[n] || slices.Contains(missing, n) {
			continue
		}
		missing = append(missing, n)
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("bash would run %q (commands it reported: %q), the analyser saw only %q and is not Opaque",
		missing, br.texts, saw)
}

// corpusCommands reads the shell commands of the permission corpus.
func corpusCommands(t *testing.T) []string {
	files, _ := filepath.Glob("../testdata/corpus*.jsonl")
	more, _ := filepath.Glob("../testdata/corpus/*.jsonl")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no corpus under ../testdata")
	}
	var cmds []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				Tool string `json:"tool"`
				Args struct {
					Command string `json:"command"`
				} `json:"args"`
			}
			if len(bytes.TrimSpace(sc.Bytes())) == 0 || json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if line.Tool == "shell" && line.Args.Command != "" {
				cmds = append(cmds, line.Args.Command)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return cmds
}

const knownFile = "testdata/differential-known.txt"

// knownDisagreements reads the committed list of expected failures.
func knownDisagreements(t testing.TB) []string {
	b, err := os.ReadFile(knownFile)
	if err != nil {
		t.Fatal(err)
	}
	var known []string
	for i, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		s, err := strconv.Unquote(l)
		if err != nil {
			t.Fatalf("%s:%d: not a Go-quoted string: %v", knownFile, i+1, err)
		}
		known = append(known, s)
	}
	return known
}

// The known bypasses of the review and of issue 9: the test must be able to
// see each (TestDifferentialOracle checks that bash reports rm).
var knownBypasses = []string{
	"ls \r#; rm -rf ./src",                 // A1
	"ls -la \\\r\nrm -rf ./src",            // A2
	"ls -la # list files \\\nrm -rf ./src", // issue 9 §1
	"r$'\\0'm -rf ./src",                   // A5
	"r$'\\x00'm -rf ./src",                 // A5
	"r$'\\u0000'm -rf ./src",               // A5
	"r$'\\c@'m -rf ./src",                  // A5
	"r$'\\400'm -rf ./src",                 // A5
}

// generated builds commands from the constructs of issue 15, each hiding a
// marker program MARK_<n> that bash runs when the construct hides nothing.
func generated() []string {
	var out []string
	n := 0
	mark := func() string { n++; return "MARK_" + strconv.Itoa(n) }
	add := func(format string) {
		m := mark()
		out = append(out, strings.ReplaceAll(format, "MARK", m))
	}
	var ctl []string
	for b := 1; b < 0x20; b++ {
		if b != '\n' {
			ctl = append(ctl, string(rune(b)))
		}
	}
	ctl = append(ctl, "\x7f", "\u00a0", "\u1680", "\u2000", "\u2003", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u0085")
	for _, c := range ctl {
		add("ls " + c + "#; MARK")
		add("ls" + c + "#; MARK")
		add("ls " + c + "\\\nMARK")
		add("ls \\" + c + "\nMARK")
		add("ls # x \\" + c + "\nMARK")
		add("echo a" + c + "b # c\nMARK")
		add("echo '" + c + "'; MARK")
		add("MA" + c + "RK")
		add("ls " + c + "&& MARK")
		add("ls; " + c + "MARK")
	}
	for _, s := range []string{
		// comments and continuations
		"ls -la # list files \\\nMARK", "ls # c \\\r\nMARK", "ls #\\\nMARK", "ls #\\\\\nMARK",
		"ls -la \\\r\nMARK", "ls\r\nMARK", "ls \\\n\\\nMARK", "ls \\\n# x\nMARK", "l\\\ns; MARK",
		"ls # ' \" $( `\nMARK", "echo \\#x; MARK", "echo x#y; MARK", "echo ${#}; MARK",
		// odd quoting
		"echo 'a'\\''b'; MARK", `echo "a\"b"; MARK`, "echo $'a\\'b'; MARK", `echo "$(echo ")")"; MARK`,
		`echo "a`, "echo 'a;MARK'\nMARK", `echo $"x"; MARK`, "echo \"`echo x`\"; MARK", "echo \\\"; MARK",
		"M'A'RK", `M"A"RK`, `M\ARK`, "$'MARK'", "$\"MARK\"",
		// here-docs
		"cat <<EOF\nx\nEOF\nMARK", "cat <<'EOF'\n$(MARK)\nEOF", "cat <<EOF\n$(MARK)\nEOF", "cat <<-EOF\n\tx\n\tEOF\nMARK",
		"cat <<'E F'\nx\nE F\nMARK", "cat <<EOF \nx\nEOF \nMARK", "cat <<EOF\nx\nEOF\r\nMARK", "cat <<EOF\nx\n EOF\nMARK",
		"cat <<\"EOF\"\nx\nEOF\nMARK", "cat <<E\\OF\nx\nEOF\nMARK", "cat <<EOF; MARK\nx\nEOF", "cat <<A <<B\na\nA\nb\nB\nMARK",
		"cat <<EOF\nx\\\nEOF\nEOF\nMARK", "cat <<''\nx\n\nMARK", "cat <<EOF\nEOF",
		// aliases, extglob
		"shopt -s expand_aliases\nalias ls=MARK\nls", "alias ls=MARK\nls", "shopt -s expand_aliases; alias ls=MARK; ls",
		"shopt -s expand_aliases\nalias x='MARK;'\nx", "shopt -s extglob\necho @(a|b); MARK", "echo !(x); MARK",
		"shopt -s extglob\ncase x in @(x|y)) MARK;; esac", "[[ x == @(x) ]] && MARK",
		// $'…' escapes cut at NUL
		"MARK$'\\0'x", "MARK$'\\x00'x", "MARK$'\\u0000'x", "MARK$'\\c@'x", "MARK$'\\400'x", "MARK$'\\U00000000'x",
		"MARK$'\\0000'x", "MARK$'\\x0'x", "$'\\0'MARK", "MARK$'\\0' -x", "MARK$'\\x'x", "MARK$'\\cA'x", "MARK$'\\e'",
		"MARK$'\\''", "echo $'\\0'; MARK", "echo $'\\n'; MARK",
		// wrapper options, abbreviated
		"env --u X MARK", "time --out X MARK", "env - MARK", "timeout --sig KILL 5 MARK", "nice --adj 5 MARK",
		"stdbuf --out L MARK", "command MARK", "exec MARK", "builtin MARK", "time MARK", "! MARK", "time -p MARK",
		// namerefs and indirection
		"ls=MARK; declare -n x=ls; $x -rf ./src", "ls=MARK; typeset -n x=ls; $x", "x=MARK; $x", "x=MARK; ${x}",
		"x=MARK; y=x; ${!y}", "a=(MARK); ${a[0]}", "ls=MARK; declare -n x=ls; y=$x; $y",
		"a='a[$'; b='(MARK)]'; (( $a$b ))", "x='a[$(MARK)]'; y=${!x}", "[[ -v 'a[$(MARK)]' ]]",
		"[[ 'a[$(MARK)]' -eq 1 ]]", "declare -n r='a[$(MARK)]'; y=$r", "printf -v x '%s%s' 'a[$' '(MARK)]'; (( x ))",
		"mapfile -C 'MARK #' -c 1 <<< x", "trap -- 'MARK' EXIT", "trap MARK EXIT", "bash -s x <<'EOF'\nMARK\nEOF",
		"echo MARK | sh -s -- x", "(( $(MARK) ))", "x=$(MARK)", "x=`MARK`", "a[$(MARK)]=1", "echo $(( $(MARK) ))",
		"eval MARK", "eval 'MARK'", "eval M''ARK", "eval \"MARK\"", "x=MARK; eval $x", "declare x=$(MARK)",
		"export x=$(MARK)", "local x=$(MARK)", ": $(MARK)", "true $(MARK)", "f() { MARK; }; f", "function f { MARK; }",
		// control flow, subshells, pipelines
		"false || MARK", "true && MARK", "if false; then :; else MARK; fi", "while false; do :; done; MARK",
		"(MARK)", "{ MARK; }", "MARK | cat", "cat | MARK", "MARK &", "MARK & disown", "coproc MARK", "! MARK",
		"for i in 1; do MARK; done", "case x in x) MARK;; esac", "select x in a; do MARK; done", "x=1 MARK",
		"MARK $(MARK)", "MARK <(MARK)", "MARK `MARK`", "{ MARK; } | { MARK; }", "MARK || MARK && MARK",
		"ls;MARK", "ls&&MARK", "ls||MARK", "ls|MARK", "ls&MARK", "ls\nMARK", "ls\n\nMARK", "ls;;MARK",
	} {
		add(s)
	}
	return out
}

// checkOne runs one input and returns the disagreement, "" when they agree
// or when bash was not asked.
func checkOne(o *oracle, cmd, dir string) (string, bashRun) {
	if why := runnable(cmd); why != "" {
		return "", bashRun{err: "not run: " + why}
	}
	br := o.run(cmd, dir)
	return disagreement(cmd, br), br
}

// TestDifferentialOracle checks the oracle itself: it runs nothing, and it
// reports what the known bypasses hide.
func TestDifferentialOracle(t *testing.T) {
	o := getOracle(t)
	dir := t.TempDir()
	for _, c := range []string{
		o.bash + " -c 'echo x > CANARY1'",
		"exec " + o.bash + " -c 'echo x > CANARY2'",
		"(exec " + o.bash + " -c 'echo x > CANARY3')",
		"echo x > CANARY4",
		"trap - DEBUG; echo x > CANARY5",
		"set +T; x=$(echo x > CANARY6)",
		"shopt -u extdebug; echo x > CANARY7",
		"ls=" + o.bash + "; $ls -c 'echo x > CANARY8'",
		"x=1; " + o.bash + " -c 'echo x > CANARY9'",
		"x=$(" + o.bash + " -c 'echo x > CANARY10')",
		"f() { echo x > CANARY11; }; f",
		"MARK_1 $(echo x > CANARY12)",
		"alias MARK_1='echo x > CANARY13'; MARK_1",
		"command_not_found_handle() { echo x > CANARY14; }; MARK_1",
		"cd /; MARK_1 > CANARY15",
	} {
		br := o.run(c, dir)
		if br.err != "" {
			t.Errorf("%q: %s", c, br.err)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("the oracle ran something: %s was created", e.Name())
	}
	for _, c := range knownBypasses {
		br := o.run(c, dir)
		if !slices.Contains(br.names, "rm") {
			t.Errorf("%q: bash should report rm, reported %q (names %q, %s)", c, br.texts, br.names, br.err)
		}
	}
	br := o.run("false || MARK_1 a$(MARK_2) | MARK_3", dir)
	sort.Strings(br.names)
	if !slices.Equal(slices.Compact(br.names), []string{"MARK_1", "MARK_2", "MARK_3"}) {
		t.Errorf("not-found commands: got %q from %q", br.names, br.texts)
	}
	br = o.run("a='a[$'; b='(MARK_1)]'; (( $a$b ))", dir)
	if !slices.Contains(br.names, "MARK_1") {
		t.Errorf("arithmetic: got %q from %q (%s)", br.names, br.texts, br.err)
	}
}

// TestDifferential compares bash and the analyser on the corpus, the
// generator and the known list.
func TestDifferential(t *testing.T) {
	o := getOracle(t)
	known := knownDisagreements(t)
	isKnown := map[string]bool{}
	for _, k := range known {
		isKnown[k] = true
	}
	var inputs []string
	seen := map[string]bool{}
	for _, list := range [][]string{knownBypasses, known, corpusCommands(t), generated()} {
		for _, c := range list {
			if !seen[c] {
				seen[c] = true
				inputs = append(inputs, c)
			}
		}
	}
	type outcome struct {
		msg string
		br  bashRun
	}
	results := make([]outcome, len(inputs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range cap(o.sem) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, err := os.MkdirTemp(t.TempDir(), "run")
			if err != nil {
				panic(err)
			}
			for i := range next {
				msg, br := checkOne(o, inputs[i], dir)
				results[i] = outcome{msg, br}
			}
		}()
	}
	start := time.Now()
	for i := range inputs {
		next <- i
	}
	close(next)
	wg.Wait()
	var notRun, incomplete, knownN int
	for i, c := range inputs {
		r := results[i]
		switch {
		case strings.HasPrefix(r.br.err, "not run"):
			notRun++
		case r.br.err != "":
			incomplete++
			t.Logf("incomplete: %q: %s", c, r.br.err)
		}
		switch {
		case isKnown[c] && r.msg != "":
			knownN++
			t.Logf("known disagreement: %q: %s", c, r.msg)
		case isKnown[c]:
			t.Errorf("fixed: remove it from the list %s: %q", knownFile, c)
		case r.msg != "":
			t.Errorf("disagreement: %q: %s", c, r.msg)
		}
	}
	t.Logf("%d inputs in %v: %d known disagreements, %d not run, %d incomplete", len(inputs), time.Since(start).Round(time.Millisecond), knownN, notRun, incomplete)
	for _, c := range knownBypasses {
		if !isKnown[c] && results[slices.Index(inputs, c)].msg == "" {
			t.Logf("the known bypass %q now agrees with bash", c)
		}
	}
}

// FuzzDifferential runs the same comparison on fuzzed inputs. Inputs in the
// known list are expected to disagree.
func FuzzDifferential(f *testing.F) {
	for _, c := range knownBypasses {
		f.Add(c)
	}
	for _, c := range generated() {
		f.Add(c)
	}
	o := getOracle(f)
	known := map[string]bool{}
	for _, k := range knownDisagreements(f) {
		known[k] = true
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 || known[cmd] {
			return
		}
		sub, err := os.MkdirTemp(dir, "f")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(sub)
		if msg, _ := checkOne(o, cmd, sub); msg != "" {
			t.Errorf("disagreement: %q: %s", cmd, msg)
		}
	})
}
