package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// The built-in rules allow a read-only command in check, say so, and are
// turned off by --no-builtin-rules and CUSTOM_AGENT_BUILTIN_RULES=off.
func TestBuiltinRulesCLI(t *testing.T) {
	repo, _ := policyWorld(t)
	decide := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"check", "--json", "--cwd", repo, "--tool", "shell", "--args", `{"command":"git status && git diff --stat"}`}, extra...)
		out, _, err := runPolicyCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Decision    string
			SourcedFrom string
			Rule        struct{ ID, Level string }
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d.Decision, d.Rule.ID
	}
	if d, id := decide(); d != "allow" || id != "builtin:git-status" {
		t.Errorf("with the built-in rules: %s by %q", d, id)
	}
	if d, _ := decide("--no-builtin-rules"); d != "ask" {
		t.Errorf("--no-builtin-rules: %s", d)
	}
	t.Setenv(builtinRulesEnv, "off")
	if d, _ := decide(); d != "ask" {
		t.Errorf("%s=off: %s", builtinRulesEnv, d)
	}
	t.Setenv(builtinRulesEnv, "maybe")
	if _, _, err := runPolicyCLI(t, "check", "--cwd", repo, "--tool", "shell", "--args", `{"command":"ls"}`); err == nil || !strings.Contains(err.Error(), "want on or off") {
		t.Errorf("%s=maybe: %v", builtinRulesEnv, err)
	}
	t.Setenv(builtinRulesEnv, "")
	out, _, err := runPolicyCLI(t, "policy", "list", "--cwd", repo, "--level", "builtin")
	if err != nil || !strings.Contains(out, "builtin:git-status") || strings.Contains(out, "no rules") {
		t.Errorf("policy list --level builtin: %v\n%s", err, out)
	}
	out, _, err = runPolicyCLI(t, "policy", "explain", "--cwd", repo, "--tool", "shell", "--args", `{"command":"git log --output=x"}`)
	if err != nil || !strings.Contains(out, `"builtin:git-log" (allow shell; builtin, built-in): unfit`) {
		t.Errorf("policy explain: %v\n%s", err, out)
	}
}

// An allowed read-only command is shown, muted on a terminal.
func TestRenderBuiltinAllow(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	p := &event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Actor: event.ActorSystem, RiskAtDecision: risk.Execute,
		SourcedFrom: "override", Reason: "Read-only command inside the project: the built-in rule `builtin:ls` allows it (judged execute)."}
	for _, onTerminal := range []bool{true, false} {
		var b bytes.Buffer
		renderEvents(t, &renderer{w: &b, onTerminal: onTerminal}, p)
		got := b.String()
		if !strings.Contains(got, "allowed by the built-in rule · Read-only command inside the project") {
			t.Errorf("onTerminal=%v: %q", onTerminal, got)
		}
		if muted := strings.HasPrefix(got, "\x1b[2m"); muted != onTerminal {
			t.Errorf("onTerminal=%v: muted=%v: %q", onTerminal, muted, got)
		}
	}
}
