package policy_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
	"github.com/custom-agent/custom-agent/policy"
)

// The pieces below are built from the constructs of the white-box review
// (shared/security/whitebox-review.md) and issue 15: control bytes, NUL
// escapes, text bash evaluates again, abbreviated and unknown options,
// namerefs, code handed to shells. Mixed with ordinary commands, they make
// commands the analyser half understands.
var (
	understoodPieces = []string{
		"ls", "ls -la", "cat README.md", "grep -rn TODO src", "git status", "git diff --stat", "npm test",
		"go test ./...", "make", "echo hi", "wc -l main.go", "head -n 5 go.mod",
	}
	trickyPieces = []string{
		"ls \r#", "ls -la # x \\", "r$'\\0'm -rf src", "cat .e$'\\x00'nv", "env --u ls rm -rf src",
		"time --out ls rm -rf src", "timeout --sig KILL 5 rm src", "grep --colour=always --bogus x src",
		"diff --frobnicate a b", "ls --no-such-option", "x='a[$(rm -rf src)]'", "(( $a$b ))", "y=${!x}",
		"[[ -v 'a[$(rm src)]' ]]", "declare -n r=ls", "$r -rf src", "trap -- 'rm -rf src' EXIT",
		"bash -s <<< 'rm -rf src'", "mapfile -C 'rm src #' -c 1 <<< x", "hash -p /bin/rm ls",
		"npm test --node-options=--require=./x.js", "go test -exec ./x .", "make CC=./x", "git checkout src",
		"printf -v x '%s' 'a[$(rm src)]'", "read -r n < f; (( n ))", "$(cat cmd.txt)", "eval \"$x\"",
	}
	seps = []string{"; ", " && ", " | ", "\n", " || "}
)

// TestPropNotUnderstoodNeverAllowed checks the principle of issue 15: if
// the analyser reports a word it did not understand (Opaque), no allow rule
// applies, whatever rules there are (rules written for the very words it
// saw, a blanket allow of the tool), no session grant made from those words
// applies, and no rule is proposed.
func TestPropNotUnderstoodNeverAllowed(t *testing.T) {
	w := newWorld(t)
	ti, _ := permission.Builtin("shell")
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(rt, "n")
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(rapid.SampledFrom(seps).Draw(rt, "sep"))
			}
			if rapid.Bool().Draw(rt, "tricky") {
				b.WriteString(rapid.SampledFrom(trickyPieces).Draw(rt, "tricky-piece"))
			} else {
				b.WriteString(rapid.SampledFrom(understoodPieces).Draw(rt, "piece"))
			}
		}
		cmd := b.String()
		res := shellrisk.Analyze(cmd, shellrisk.Env{Cwd: w.repo, Home: w.home})
		if !res.Opaque {
			return
		}
		args := map[string]any{"command": cmd}
		s, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home})
		if err != nil {
			rt.Fatal(err)
		}
		if r, ok := s.SessionRuleFor(ti, args); ok {
			rt.Fatalf("%q is not understood, yet SessionRuleFor proposed %+v", cmd, r)
		}
		if r, ok := s.ProjectRuleFor(ti, args); ok {
			rt.Fatalf("%q is not understood, yet ProjectRuleFor proposed %+v", cmd, r)
		}
		// The strongest grants an attacker could hope for: a rule for each
		// command exactly as the analyser saw it, and one for the whole tool.
		rules := []permission.Rule{{ID: "all-shell", Tool: "shell", Decision: permission.Allow}}
		for i, c := range res.Commands {
			if len(c.Argv) == 0 || c.Argv[0] == "" {
				continue
			}
			k := rapid.IntRange(1, len(c.Argv)).Draw(rt, "words")
			rules = append(rules, permission.Rule{ID: "seen-" + string(rune('a'+i%26)), Tool: "shell",
				Command: strings.Join(c.Argv[:k], " "), Decision: permission.Allow})
		}
		for _, r := range rules {
			if err := s.AddSession(r); err != nil {
				continue // a rule the store refuses grants nothing
			}
		}
		pol, err := s.Policy()
		if err != nil {
			rt.Fatal(err)
		}
		d := permission.Engine{}.Check(permission.Request{Tool: ti, Args: args, Cwd: w.repo, Home: w.home, ConfigHome: w.cfg, Policy: pol})
		if d.Decision == permission.Allow {
			rt.Fatalf("%q is not understood (%v), yet it was allowed: %s", cmd, res.Findings, d.Reason)
		}
	})
}

// TestNoProposalFromMisreadCommand is review C1: "allow for session" on
// r$'\0'm -rf ./build proposed a rule for the program r\x00m, after which
// r$'\0'm -rf ~ ran without asking. Bash runs rm there.
func TestNoProposalFromMisreadCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.open(t)
	ti, _ := permission.Builtin("shell")
	for _, cmd := range []string{`r$'\0'm -rf ./build`, `r$'\x00'm -rf ./build`, "ls \r#; rm -rf ./build", `env --u ls rm -rf ./build`} {
		if r, ok := s.SessionRuleFor(ti, map[string]any{"command": cmd}); ok {
			t.Errorf("SessionRuleFor(%q) proposed %+v", cmd, r)
		}
		if r, ok := s.ProjectRuleFor(ti, map[string]any{"command": cmd}); ok {
			t.Errorf("ProjectRuleFor(%q) proposed %+v", cmd, r)
		}
		if d := w.check(t, s, "shell", map[string]any{"command": cmd}); d.Decision == permission.Allow {
			t.Errorf("%q allowed: %s", cmd, d.Reason)
		}
	}
	// The rule the old proposal made must not carry the real rm either.
	if err := s.AddSession(permission.Rule{ID: "nul-rm", Tool: "shell", Command: "r\x00m", Decision: permission.Allow}); err == nil {
		if d := w.check(t, s, "shell", map[string]any{"command": `r$'\0'm -rf ~`}); d.Decision == permission.Allow {
			t.Errorf("a rule for r\\x00m allowed r$'\\0'm -rf ~: %s", d.Reason)
		}
	}
}
