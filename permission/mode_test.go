package permission_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

func TestCheckModes(t *testing.T) {
	t.Parallel()
	var (
		accept = withMode(permission.ModeAcceptEdits)
		dont   = withMode(permission.ModeDontAsk)
		plan   = withMode(permission.ModePlan)
		patch  = func(p string) args {
			return args{"patch": "--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-a\n+b\n"}
		}
		askSrc   = permission.Rule{ID: "ask-src", Tool: "write_file", Path: "src/**", Decision: permission.Ask}
		denySrc  = permission.Rule{ID: "no-src", Tool: "write_file", Path: "src/**", Decision: permission.Deny}
		allowRM  = permission.Rule{ID: "all-shell", Tool: "shell", Decision: permission.Allow}
		allowEnv = permission.Rule{ID: "env", Tool: "read_file", Path: ".env", Decision: permission.Allow}
	)
	tests := []struct {
		name      string
		req       permission.Request
		want      outcome
		reasonHas []string
	}{
		// accept-edits.
		{name: "accept-edits write inside cwd", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, accept),
			want: outcome{permission.Allow, risk.Write, permission.FromMode, ""}, reasonHas: []string{"accept-edits mode allows"}},
		{name: "accept-edits patch inside cwd", req: newReq(t, "apply_patch", patch("src/a.go"), accept),
			want: outcome{permission.Allow, risk.Write, permission.FromMode, ""}, reasonHas: []string{"accept-edits"}},
		{name: "accept-edits write outside cwd asks", req: newReq(t, "write_file", args{"path": "/tmp/a", "content": "x"}, accept),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "accept-edits write through .. asks", req: newReq(t, "write_file", args{"path": "../other/a", "content": "x"}, accept),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "accept-edits git hook asks", req: newReq(t, "write_file", args{"path": ".git/hooks/pre-commit", "content": "x"}, accept),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "accept-edits patch of a git hook asks", req: newReq(t, "apply_patch", patch(".git/hooks/pre-commit"), accept),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "accept-edits .env denied", req: newReq(t, "write_file", args{"path": ".env", "content": "x"}, accept),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "accept-edits policy file denied", req: newReq(t, "write_file", args{"path": ".custom-agent/policy.json", "content": "{}"}, accept),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "accept-edits unknown patch asks", req: newReq(t, "apply_patch", args{"patch": "nothing here"}, accept),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},
		{name: "accept-edits ask rule keeps asking", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, accept, withRules(t, askSrc)),
			want: outcome{permission.Ask, risk.Write, permission.FromOverride, "ask-src"}},
		{name: "accept-edits deny rule wins", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, accept, withRules(t, denySrc)),
			want: outcome{permission.Deny, risk.Write, permission.FromOverride, "no-src"}},
		{name: "accept-edits shell still asks", req: newReq(t, "shell", args{"command": "echo hi > out.txt"}, accept),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "accept-edits destructive still asks", req: newReq(t, "shell", args{"command": "rm -rf dist"}, accept, withRules(t, allowRM)),
			want: outcome{permission.Ask, risk.Destructive, permission.FromOverride, "all-shell"}},
		{name: "accept-edits read allowed", req: newReq(t, "read_file", args{"path": "a"}, accept),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "accept-edits network asks", req: newReq(t, "http_get", args{"url": "https://example.com/"}, accept),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "accept-edits credential read denied", req: newReq(t, "read_file", args{"path": "~/.ssh/id_rsa"}, accept),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},

		// dont-ask.
		{name: "dont-ask write denied", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, dont),
			want:      outcome{permission.Deny, risk.Write, permission.FromMode, ""},
			reasonHas: []string{"dont-ask mode turned the question into a denial", "write calls are asked by default"}},
		{name: "dont-ask shell denied", req: newReq(t, "shell", args{"command": "npm test"}, dont),
			want: outcome{permission.Deny, risk.Execute, permission.FromMode, ""}, reasonHas: []string{"dont-ask"}},
		{name: "dont-ask destructive denied not allowed", req: newReq(t, "shell", args{"command": "rm -rf dist"}, dont, withRules(t, allowRM)),
			want:      outcome{permission.Deny, risk.Destructive, permission.FromMode, "all-shell"},
			reasonHas: []string{"dont-ask", "destructive calls are asked every time"}},
		{name: "dont-ask ask rule denied", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, dont, withRules(t, askSrc)),
			want: outcome{permission.Deny, risk.Write, permission.FromMode, "ask-src"}, reasonHas: []string{"dont-ask", "`ask-src`"}},
		{name: "dont-ask read allowed", req: newReq(t, "read_file", args{"path": "a"}, dont),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "dont-ask allow rule allows", req: newReq(t, "shell", args{"command": "npm test"}, dont, withRules(t, permission.Rule{ID: "npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow})),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "npm-test"}},
		{name: "dont-ask prior approval allows", req: newReq(t, "shell", args{"command": "npm test"}, dont, withPrior(t, "shell", args{"command": "npm test"}, risk.Execute, true)),
			want: outcome{permission.Allow, risk.Execute, permission.FromPrior, ""}},
		{name: "dont-ask credential stays default deny", req: newReq(t, "read_file", args{"path": ".env"}, dont),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "dont-ask credential allowed by a rule naming it", req: newReq(t, "read_file", args{"path": ".env"}, dont, withRules(t, allowEnv)),
			want: outcome{permission.Allow, risk.Credential, permission.FromOverride, "env"}},

		// plan, unchanged.
		{name: "plan write denied", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}, plan),
			want: outcome{permission.Deny, risk.Write, permission.FromMode, ""}, reasonHas: []string{"plan mode"}},
		{name: "plan shell denied", req: newReq(t, "shell", args{"command": "ls"}, plan),
			want: outcome{permission.Deny, risk.Execute, permission.FromMode, ""}},
		{name: "plan read allowed", req: newReq(t, "read_file", args{"path": "a"}, plan),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := permission.Engine{}.Check(tc.req)
			if got := outcomeOf(d); got != tc.want {
				t.Errorf("got %+v, want %+v\nreason: %s", got, tc.want, d.Reason)
			}
			for _, s := range tc.reasonHas {
				if !strings.Contains(d.Reason, s) {
					t.Errorf("reason %q lacks %q", d.Reason, s)
				}
			}
		})
	}
}

// TestCheckDontAskMirrorsDefault: dont-ask decides every call as default
// does, except that each ask is a deny from the mode that keeps the
// default reason.
func TestCheckDontAskMirrorsDefault(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		req.Mode = permission.ModeDefault
		def := permission.Engine{}.Check(req)
		req.Mode = permission.ModeDontAsk
		got := permission.Engine{}.Check(req)
		if def.Decision != permission.Ask {
			if outcomeOf(got) != outcomeOf(def) || got.Reason != def.Reason {
				t.Fatalf("default %+v (%s), dont-ask %+v (%s)", outcomeOf(def), def.Reason, outcomeOf(got), got.Reason)
			}
			return
		}
		if got.Decision != permission.Deny || got.SourcedFrom != permission.FromMode || !strings.HasSuffix(got.Reason, def.Reason) {
			t.Fatalf("default asked (%s), dont-ask gave %+v (%s)", def.Reason, outcomeOf(got), got.Reason)
		}
	})
}

// TestCheckAcceptEditsOnlyLoosensEdits: accept-edits differs from default
// only by allowing an edit tool's call that default asks, at write risk.
func TestCheckAcceptEditsOnlyLoosensEdits(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		req.Mode = permission.ModeDefault
		def := permission.Engine{}.Check(req)
		req.Mode = permission.ModeAcceptEdits
		got := permission.Engine{}.Check(req)
		if outcomeOf(got) == outcomeOf(def) {
			return
		}
		edit := req.Tool.Name == "write_file" || req.Tool.Name == "apply_patch"
		if !edit || def.Decision != permission.Ask || def.SourcedFrom != permission.FromDefault ||
			got.Decision != permission.Allow || got.SourcedFrom != permission.FromMode || got.RiskAtDecision != risk.Write {
			t.Fatalf("default %+v (%s), accept-edits %+v (%s)", outcomeOf(def), def.Reason, outcomeOf(got), got.Reason)
		}
	})
}

// TestPropNoModeRunsDangerWithoutAPerson: in every mode, with any policy,
// skill and history, a destructive call is never allowed (it is asked or
// denied), a credential call is allowed or asked only by a rule that names
// it, a call with a credential part is denied by the default table, and
// dont-ask never asks.
func TestPropNoModeRunsDangerWithoutAPerson(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		req.Mode = rapid.SampledFrom(append([]permission.Mode{""}, permission.Modes...)).Draw(t, "anymode")
		d := permission.Engine{}.Check(req)
		switch {
		case d.RiskAtDecision == risk.Destructive && d.Allowed():
			t.Fatalf("%s mode allowed a destructive call: %+v (%s)", req.Mode, outcomeOf(d), d.Reason)
		case d.RiskAtDecision == risk.Credential && d.Allowed() && (d.SourcedFrom != permission.FromOverride || d.Rule == nil):
			t.Fatalf("%s mode allowed a credential call without a rule: %+v (%s)", req.Mode, outcomeOf(d), d.Reason)
		case d.RiskAtDecision == risk.Credential && d.Allowed() && !namesArgs(req.Policy, d.Rule.ID):
			t.Fatalf("%s mode: rule %s allowed a credential call without naming its arguments: %s", req.Mode, d.Rule.ID, d.Reason)
		case req.Mode == permission.ModeDontAsk && d.Decision == permission.Ask:
			t.Fatalf("dont-ask asked: %s", d.Reason)
		case d.SourcedFrom == permission.FromOverride && d.Decision == permission.Ask && d.Rule != nil && !namesArgs(req.Policy, d.Rule.ID) &&
			(d.RiskAtDecision == risk.Credential || slices.ContainsFunc(d.Findings, func(f risk.Finding) bool { return f.Risk == risk.Credential })):
			t.Fatalf("%s mode: rule %s turned a credential call's denial into a question without naming its arguments: %s", req.Mode, d.Rule.ID, d.Reason)
		case d.SourcedFrom == permission.FromDefault && d.Decision != permission.Deny && slices.ContainsFunc(d.Findings, func(f risk.Finding) bool { return f.Risk == risk.Credential }):
			t.Fatalf("%s mode: a call with a credential part was not denied by default: %+v (%s)", req.Mode, outcomeOf(d), d.Reason)
		case d.SourcedFrom == permission.FromMode && d.Allowed() && req.Mode != permission.ModeAcceptEdits:
			t.Fatalf("%s mode allowed a call by itself: %s", req.Mode, d.Reason)
		}
	})
}

// namesArgs reports whether the rule with the given id names a command,
// path or URL.
func namesArgs(p *permission.Policy, id string) bool {
	i := slices.IndexFunc(p.Rules(), func(r permission.Rule) bool { return r.ID == id })
	if i < 0 {
		return false
	}
	r := p.Rules()[i]
	return r.Command != "" || r.Path != "" || r.URL != ""
}

func TestBuiltinAllowedModes(t *testing.T) {
	t.Parallel()
	for _, info := range permission.Builtins() {
		for _, m := range permission.Modes {
			want := m != permission.ModePlan || info.Risk == risk.Read
			if got := info.AllowsMode(m); got != want {
				t.Errorf("%s.AllowsMode(%s) = %v, want %v", info.Name, m, got, want)
			}
		}
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, m := range permission.Modes {
		if got, err := permission.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	for _, s := range []string{"", "yolo", "Plan", "accept_edits", "dontask"} {
		_, err := permission.ParseMode(s)
		want := `unknown mode "` + s + `" (want default, plan, accept-edits or dont-ask)`
		if err == nil || err.Error() != want || !errors.Is(err, permission.ErrUnknownMode) {
			t.Errorf("ParseMode(%q) error = %v, want %s", s, err, want)
		}
	}
}
