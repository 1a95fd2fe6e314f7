package ruleimport

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestTranslate translates a real-looking settings file of each agent
// (Claude Code's with 20 rules, some of which have no exact counterpart)
// and compares the result, rules and rules left out with why, with a
// golden file. Every rule it makes is then added to a policy, which checks
// it as a policy file's rule is checked.
func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		agent          hook.Agent
		file, golden   string
		rules, skipped int
	}{
		{hook.ClaudeCode, "proj/.claude/settings.json", "claude-code.golden.json", 16, 4},
		{hook.GeminiCLI, "gemini-settings.json", "gemini-cli.golden.json", 8, 3},
	} {
		t.Run(string(tc.agent), func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Translate(tc.agent, b, Options{SettingsDir: "/home/user/proj/.claude"})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(res, "", "  ")
			got = append(got, '\n')
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(got, want) {
				t.Errorf("translation differs from %s (%v):\n%s", golden, err, got)
			}
			if len(res.Rules) != tc.rules || len(res.Skipped) != tc.skipped {
				t.Errorf("%d rules and %d left out, want %d and %d", len(res.Rules), len(res.Skipped), tc.rules, tc.skipped)
			}
			s, err := policy.Open(policy.Options{Cwd: t.TempDir(), ConfigHome: t.TempDir(), Home: "/home/user", NoBuiltin: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Rules {
				if err := s.Add(permission.LevelUser, r.Rule); err != nil {
					t.Errorf("%s: %v", r.From, err)
				}
			}
			for _, r := range res.Skipped {
				if r.Why == "" {
					t.Errorf("%s left out without a reason", r.From)
				}
			}
		})
	}
}

// TestNeverWidensAllow: no allow rule is made from a rule that the
// translation could only cover more broadly.
func TestNeverWidensAllow(t *testing.T) {
	for _, from := range []string{"Bash(docker compose * up)", "Glob", "LS", "Read(!x)", "Bash(a?b)", "WebFetch(https://x.example/)"} {
		res, err := Translate(hook.ClaudeCode, []byte(`{"permissions":{"allow":[`+string(mustJSON(from))+`]}}`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rules) != 0 || len(res.Skipped) != 1 {
			t.Errorf("%s: %+v", from, res)
		}
	}
	for _, from := range []string{"glob", "replace", "run_shell_command(rm *)"} {
		res, err := Translate(hook.GeminiCLI, []byte(`{"tools":{"allowed":[`+string(mustJSON(from))+`]}}`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rules) != 0 {
			t.Errorf("%s: %+v", from, res)
		}
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// TestTranslateGeminiPolicy: a Gemini CLI policy-engine file, against a
// golden file; every rule made is one a policy file may hold.
func TestTranslateGeminiPolicy(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gemini-policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := TranslateGeminiPolicy(b, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(res, "", "  ")
	got = append(got, '\n')
	golden := filepath.Join("testdata", "gemini-policy.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(got, want) {
		t.Errorf("translation differs from %s (%v):\n%s", golden, err, got)
	}
	s, err := policy.Open(policy.Options{Cwd: t.TempDir(), ConfigHome: t.TempDir(), Home: "/home/user", NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rules {
		if err := s.Add(permission.LevelUser, r.Rule); err != nil {
			t.Errorf("%s: %v", r.From, err)
		}
		if r.Rule.Decision == permission.Allow && r.Note != "" && !strings.Contains(r.Note, "whole words") {
			t.Errorf("%s: an allow with a note that it is broader: %s", r.From, r.Note)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	for name, src := range map[string]string{
		"a table":         "[rules]\nx = 1",
		"outside a rule":  "decision = \"allow\"",
		"an inline table": "[[rule]]\nx = {a = 1}",
		"twice":           "[[rule]]\ndecision = \"allow\"\ndecision = \"deny\"",
		"unterminated":    "[[rule]]\nx = [\"a\",",
		"multi-line":      "[[rule]]\nx = \"\"\"a\"\"\"",
		"dotted key":      "[[rule]]\na.b = 1",
	} {
		if _, err := parseRules([]byte(src)); err == nil {
			t.Errorf("%s: read %q", name, src)
		}
	}
	rs, err := parseRules([]byte("[[rule]]\nx = [\n  \"a # not a comment\",\n  'b',\n] # c\ny = -3\nz = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rs[0].keys); got != "map[x:[a # not a comment b] y:-3 z:true]" {
		t.Errorf("keys %s", got)
	}
}
