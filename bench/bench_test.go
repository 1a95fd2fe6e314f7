// Package bench compares the PermissionEngine with the same policy written
// for Open Policy Agent (a prepared Rego query) and for cedar-go. It lives in
// its own module so that OPA and cedar-go never enter the main module.
//
// What is compared, for each engine:
//
//	(a) read_file of a path inside the working directory;
//	(b) a compound shell command of about 100 characters whose last simple
//	    command is `rm -rf …` (an escalation to destructive);
//	(d) a shell call matched against 20 and against 1,000 allow rules
//	    (command prefixes), the matching rule being the last one.
//
// The comparison is deliberately generous to OPA and cedar-go: they get
// pre-parsed input. Neither parses shell, so (b) hands them the command
// already split into simple commands, words and flags, and every path
// already made absolute and clean; our engine gets the raw command string
// and does the parsing (mvdan.cc/sh), path canonicalisation and risk
// analysis inside Check. Cedar answers only allow or deny, so "ask" is
// its Deny (the call is not allowed without a person).
package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission"
)

const (
	home = "/home/u"
	cwd  = "/home/u/proj"

	// compound is (b): 100 characters, five simple commands, the last
	// destructive.
	compound = "cd src && go test ./... 2>&1 | tee /home/u/proj/test.log; git status --short && rm -rf build/cache tmp"
)

// ---------------------------------------------------------------- our engine

func engineRequest(tool string, args map[string]any, pol *permission.Policy) permission.Request {
	info, ok := permission.Builtin(tool)
	if !ok {
		panic("unknown tool " + tool)
	}
	return permission.Request{Tool: info, Args: args, Cwd: cwd, Home: home, Policy: pol}
}

func ruleCommand(i int) string { return fmt.Sprintf("npm run task-%04d", i) }

// matchedCommand is (d)'s call: it matches rule n-1 only.
func matchedCommand(n int) string { return ruleCommand(n-1) + " --silent" }

func enginePolicy(b *testing.B, n int) *permission.Policy {
	rules := make([]permission.Rule, n)
	for i := range rules {
		rules[i] = permission.Rule{
			ID: fmt.Sprintf("r%d", i), Level: permission.LevelUser,
			Tool: "shell", Command: ruleCommand(i), Decision: permission.Allow,
		}
	}
	p, err := permission.Compile(rules)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchEngine(b *testing.B, req permission.Request, want permission.Verdict) {
	var e permission.Engine
	if d := e.Check(req); d.Decision != want {
		b.Fatalf("engine decided %s (%s), want %s", d.Decision, d.Reason, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Check(req)
	}
}

func BenchmarkEngine(b *testing.B) {
	b.Run("a-read-file", func(b *testing.B) {
		benchEngine(b, engineRequest("read_file", map[string]any{"path": "src/main.go"}, nil), permission.Allow)
	})
	b.Run("b-compound-shell", func(b *testing.B) {
		benchEngine(b, engineRequest("shell", map[string]any{"command": compound}, nil), permission.Ask)
	})
	for _, n := range []int{20, 1000} {
		b.Run(fmt.Sprintf("d-rules-%d", n), func(b *testing.B) {
			req := engineRequest("shell", map[string]any{"command": matchedCommand(n)}, enginePolicy(b, n))
			benchEngine(b, req, permission.Allow)
		})
	}
}

// BenchmarkParse is the mvdan/sh parse of (b) alone: the part of the
// engine's (b) that OPA and cedar-go are spared.
func BenchmarkParse(b *testing.B) {
	b.Run("b-compound-shell", func(b *testing.B) {
		p := syntax.NewParser()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Parse(strings.NewReader(compound), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ---------------------------------------------------------------------- OPA

// regoPolicy is the same policy in Rego v1: the risk of a call is the
// highest level any of its parts raises; credential is denied, destructive
// asked, an allow rule allows a call when every simple command starts with
// its prefix, reads are allowed, everything else is asked.
const regoPolicy = `package agent

levels := {"read": 1, "write": 2, "execute": 3, "network": 4, "credential": 5, "destructive": 6}

credential_dirs := ["/home/u/.ssh", "/home/u/.aws", "/home/u/.config/gcloud", "/etc"]

network_programs := {"curl", "wget", "nc", "ssh", "scp", "rsync"}

within(p, dir) if p == dir

within(p, dir) if startswith(p, concat("", [dir, "/"]))

contrib contains levels.read if input.tool == "read_file"

contrib contains levels.execute if input.tool == "shell"

contrib contains levels.write if {
	input.tool == "read_file"
	not within(input.path, input.cwd)
}

contrib contains levels.credential if {
	some p in input.paths
	some d in credential_dirs
	within(p, d)
}

contrib contains levels.credential if {
	some p in input.paths
	regex.match("(^|/)\\.env(\\.[^/]*)?$", p)
}

contrib contains levels.write if {
	some p in input.writes
	not within(p, input.cwd)
}

contrib contains levels.network if {
	some c in input.commands
	c.name in network_programs
}

contrib contains levels.destructive if {
	some c in input.commands
	c.name == "rm"
	recursive(c)
	force(c)
}

recursive(c) if {
	some a in c.args
	regex.match("^-[a-zA-Z]*[rR]", a)
}

recursive(c) if "--recursive" in c.args

force(c) if {
	some a in c.args
	regex.match("^-[a-zA-Z]*f", a)
}

force(c) if "--force" in c.args

risk := max(contrib)

rule_allows if {
	some r in data.rules
	r.tool == input.tool
	every c in input.commands {
		startswith(c.line, r.prefix)
	}
}

decision := "deny" if risk == levels.credential
else := "ask" if risk == levels.destructive
else := "allow" if rule_allows
else := "allow" if risk == levels.read
else := "ask"
`

type simpleCmd struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	Line string   `json:"line"`
}

func cmdInput(cs ...simpleCmd) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		args := make([]any, len(c.Args))
		for j, a := range c.Args {
			args[j] = a
		}
		line := c.Line
		if line == "" {
			line = strings.Join(append([]string{c.Name}, c.Args...), " ")
		}
		out[i] = map[string]any{"name": c.Name, "args": args, "line": line}
	}
	return out
}

// compoundSplit is (b) as a shell parser would hand it over.
var compoundSplit = []simpleCmd{
	{Name: "cd", Args: []string{"src"}},
	{Name: "go", Args: []string{"test", "./..."}},
	{Name: "tee", Args: []string{"/home/u/proj/test.log"}},
	{Name: "git", Args: []string{"status", "--short"}},
	{Name: "rm", Args: []string{"-rf", "build/cache", "tmp"}},
}

var (
	inputReadFile = map[string]any{
		"tool": "read_file", "cwd": cwd, "path": "/home/u/proj/src/main.go",
		"paths": []any{"/home/u/proj/src/main.go"}, "writes": []any{}, "commands": []any{},
	}
	inputCompound = map[string]any{
		"tool": "shell", "cwd": cwd, "path": "",
		"paths":    []any{"/home/u/proj/src", "/home/u/proj/test.log", "/home/u/proj/build/cache", "/home/u/proj/tmp"},
		"writes":   []any{"/home/u/proj/test.log", "/home/u/proj/build/cache", "/home/u/proj/tmp"},
		"commands": cmdInput(compoundSplit...),
	}
)

func inputRules(n int) map[string]any {
	words := strings.Fields(matchedCommand(n))
	return map[string]any{
		"tool": "shell", "cwd": cwd, "path": "", "paths": []any{}, "writes": []any{},
		"commands": cmdInput(simpleCmd{Name: words[0], Args: words[1:]}),
	}
}

func regoRules(n int) []any {
	rules := make([]any, n)
	for i := range rules {
		rules[i] = map[string]any{"tool": "shell", "prefix": ruleCommand(i)}
	}
	return rules
}

func prepareRego(b *testing.B, rules []any) rego.PreparedEvalQuery {
	ctx := context.Background()
	opts := []func(*rego.Rego){rego.Query("data.agent.decision"), rego.Module("agent.rego", regoPolicy)}
	if rules != nil {
		opts = append(opts, rego.Store(inmemStore(map[string]any{"rules": rules})))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return pq
}

func inmemStore(data map[string]any) storage.Store { return inmem.NewFromObject(data) }

func benchRego(b *testing.B, pq rego.PreparedEvalQuery, input map[string]any, want string) {
	ctx := context.Background()
	rs, err := pq.Eval(ctx, rego.EvalInput(input))
	if err != nil {
		b.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Expressions[0].Value != want {
		b.Fatalf("OPA decided %v, want %s", rs, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := pq.Eval(ctx, rego.EvalInput(input)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOPA(b *testing.B) {
	b.Run("a-read-file", func(b *testing.B) {
		benchRego(b, prepareRego(b, nil), inputReadFile, "allow")
	})
	b.Run("b-compound-shell", func(b *testing.B) {
		benchRego(b, prepareRego(b, nil), inputCompound, "ask")
	})
	for _, n := range []int{20, 1000} {
		b.Run(fmt.Sprintf("d-rules-%d", n), func(b *testing.B) {
			benchRego(b, prepareRego(b, regoRules(n)), inputRules(n), "allow")
		})
	}
	// The same (a) with the input converted to an ast.Value once, outside
	// the loop: how much of OPA's time is converting Go values.
	b.Run("a-read-file-parsed-input", func(b *testing.B) {
		pq := prepareRego(b, nil)
		in, err := ast.InterfaceToValue(inputReadFile)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pq.Eval(ctx, rego.EvalParsedInput(in)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ------------------------------------------------------------------ cedar-go

// cedarPolicy is the same policy in Cedar. Cedar cannot iterate over a set
// or prefix-match its elements, so the caller pre-computes what the Rego
// version derives: the programs a command runs and the flags given to rm.
const cedarPolicy = `
permit (principal, action == Action::"read_file", resource)
when { context.path like "/home/u/proj/*" };

forbid (principal, action, resource)
when {
  context.path like "/home/u/.ssh/*" || context.path like "/home/u/.aws/*" ||
  context.path like "/home/u/.config/gcloud/*" || context.path like "/etc/*" ||
  context.path like "*/.env" || context.path like "*/.env.*"
};

forbid (principal, action == Action::"shell", resource)
when { context.programs.contains("rm") && context.rmflags.containsAll(["r", "f"]) };

forbid (principal, action == Action::"shell", resource)
when { context.programs.containsAny(["curl", "wget", "nc", "ssh", "scp", "rsync"]) };
`

func cedarRulePolicies(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "@id(\"r%d\")\npermit (principal, action == Action::\"shell\", resource)\nwhen { context.command like \"%s*\" };\n", i, ruleCommand(i))
	}
	return sb.String()
}

func cedarSet(ss ...string) cedar.Set {
	vs := make([]cedar.Value, len(ss))
	for i, s := range ss {
		vs[i] = cedar.String(s)
	}
	return cedar.NewSet(vs...)
}

func cedarRequest(action, path, command string, programs, rmflags []string) cedar.Request {
	return cedar.Request{
		Principal: cedar.NewEntityUID("Agent", "session"),
		Action:    cedar.NewEntityUID("Action", cedar.String(action)),
		Resource:  cedar.NewEntityUID("Call", "c1"),
		Context: cedar.NewRecord(cedar.RecordMap{
			"path":     cedar.String(path),
			"command":  cedar.String(command),
			"programs": cedarSet(programs...),
			"rmflags":  cedarSet(rmflags...),
		}),
	}
}

func benchCedar(b *testing.B, src string, req cedar.Request, want cedar.Decision) {
	ps, err := cedar.NewPolicySetFromBytes("agent.cedar", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	if d, diag := cedar.Authorize(ps, cedar.EntityMap{}, req); d != want || len(diag.Errors) > 0 {
		b.Fatalf("cedar decided %v (%v), want %v", d, diag, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cedar.Authorize(ps, cedar.EntityMap{}, req)
	}
}

func BenchmarkCedar(b *testing.B) {
	b.Run("a-read-file", func(b *testing.B) {
		benchCedar(b, cedarPolicy, cedarRequest("read_file", "/home/u/proj/src/main.go", "", nil, nil), cedar.Allow)
	})
	b.Run("b-compound-shell", func(b *testing.B) {
		req := cedarRequest("shell", "", compound, []string{"cd", "go", "tee", "git", "rm"}, []string{"r", "f"})
		benchCedar(b, cedarPolicy, req, cedar.Deny)
	})
	for _, n := range []int{20, 1000} {
		b.Run(fmt.Sprintf("d-rules-%d", n), func(b *testing.B) {
			req := cedarRequest("shell", "", matchedCommand(n), []string{"npm"}, nil)
			benchCedar(b, cedarPolicy+cedarRulePolicies(n), req, cedar.Allow)
		})
	}
}
