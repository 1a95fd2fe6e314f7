package policy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// world is a repository and a config home in temporary directories.
type world struct {
	repo, cfg, home string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{repo: filepath.Join(base, "repo"), cfg: filepath.Join(base, "cfg"), home: filepath.Join(base, "home")}
	for _, d := range []string{filepath.Join(w.repo, ".git", "objects"), filepath.Join(w.repo, ".git", "refs"), w.cfg, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A git directory git takes for one: HEAD, objects and refs.
	if err := os.WriteFile(filepath.Join(w.repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) writeProject(t testing.TB, src string) string {
	t.Helper()
	return writeFile(t, filepath.Join(w.repo, ".custom-agent", "policy.json"), src)
}

func (w *world) writeUser(t testing.TB, src string) string {
	t.Helper()
	return writeFile(t, policy.UserFile(w.cfg), src)
}

func writeFile(t testing.TB, p, src string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) open(t testing.TB) *policy.Store {
	t.Helper()
	s, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *world) check(t testing.TB, s *policy.Store, tool string, args map[string]any) permission.Decision {
	t.Helper()
	ti, ok := permission.Builtin(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	pol, err := s.Policy()
	if err != nil {
		t.Fatal(err)
	}
	req := permission.Request{Tool: ti, Args: args, Cwd: w.repo, Home: w.home, ConfigHome: w.cfg, Policy: pol}
	req.GitConfigs = resolve.GitConfigsFor(req) // the configuration git would read
	return permission.Engine{}.Check(req)
}

func TestLoadErrorsHavePositions(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"syntax", "{\"version\": 1,\n  \"rules\": [,]}", ":2:13: invalid character ','"},
		{"unexpected end", "{\"version\": 1,\n\"rules\": [", ":2:11: unexpected end"},
		{"wrong type", "{\"version\": 1, \"rules\": [\n  {\"id\": \"a\", \"tool\": 5, \"decision\": \"allow\"}]}", `:2:23: rule "a": tool: number is not a string`},
		{"unknown field", "{\"version\": 1, \"rules\": [\n  {\"id\": \"a\", \"tool\": \"shell\",\n   \"comand\": \"ls\", \"decision\": \"allow\"}]}", `:3:4: rule "a": unknown field "comand"`},
		{"unknown top field", "{\"version\": 1,\n \"rulez\": []}", `:2:2: unknown field "rulez"`},
		{"missing version", `{"rules": []}`, `version: missing`},
		{"wrong version", "{\n\"version\": 2, \"rules\": []}", `:2:1: version: 2 is not supported`},
		{"bad decision", "{\"version\": 1, \"rules\": [\n  {\"id\": \"a\", \"tool\": \"shell\", \"decision\": \"sometimes\"}]}", `:2:32: rule "a": decision: "sometimes" is not allow, ask or deny`},
		{"bad glob", "{\"version\": 1, \"rules\": [\n  {\"id\": \"g\", \"tool\": \"read_file\", \"path\": \"src/[\", \"decision\": \"deny\"}]}", `:2:36: rule "g": path:`},
		{"missing id", "{\"version\": 1, \"rules\": [\n  {\"tool\": \"shell\", \"decision\": \"deny\"}]}", `:2:3: id: rule 1 has no id`},
		{"duplicate id", "{\"version\": 1, \"rules\": [\n  {\"id\": \"a\", \"tool\": \"shell\", \"decision\": \"deny\"},\n  {\"id\": \"a\", \"tool\": \"read_file\", \"decision\": \"deny\"}]}", `:3:4: rule "a": id: duplicate id: line 2`},
		{"duplicate key", "{\"version\": 1, \"rules\": [],\n \"rules\": []}", `:2:2: the key "rules" appears twice`},
		{"trailing data", `{"version": 1, "rules": []} {}`, "trailing data"},
		{"examples in unknown field", "{\"version\": 1, \"rules\": [{\"id\": \"a\", \"tool\": \"shell\", \"decision\": \"deny\",\n \"examples\": {\"matches\": []}}]}", `rule "a": unknown field "matches"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			p := w.writeProject(t, tc.src)
			_, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home})
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Open = %v, want a *policy.Error", err)
			}
			if !strings.HasPrefix(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %v\nwant it to start with the file and contain\n  %s", err, tc.want)
			}
		})
	}
}

func TestExamplesCheckedAtLoad(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeUser(t, `{"version": 1, "rules": [
  {"id": "npm-test", "tool": "shell", "command": "npm test", "decision": "allow",
   "examples": {"match": [{"command": "npm test -- --watch=false"}], "notMatch": [{"command": "npm publish"}]}},
  {"id": "env", "tool": "read_file", "path": "**/.env*", "decision": "deny",
   "examples": {"match": [{"path": "app/.env.local"}], "notMatch": [{"path": "README.md"}]}},
  {"id": "gh", "tool": "http_*", "url": "api.github.com", "decision": "allow",
   "examples": {"match": [{"url": "https://api.github.com/repos"}], "notMatch": [{"url": "https://evil.example/"}]}},
  {"id": "mcp", "tool": "mcp__github__create_issue", "args": {"repo": "me/*"}, "decision": "allow",
   "examples": {"match": [{"repo": "me/x"}], "notMatch": [{"repo": "you/x"}]}}
]}`)
	w.open(t)

	w.writeUser(t, `{"version": 1, "rules": [
  {"id": "npm-test", "tool": "shell", "command": "npm test", "decision": "allow",
   "examples": {"match": [{"command": "npm test && curl x | sh"}], "notMatch": [{"command": "npm test"}]}}
]}`)
	_, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home})
	if err == nil {
		t.Fatal("Open accepted failing examples")
	}
	for _, want := range []string{`:3:4: rule "npm-test": examples.match[0]: the rule does not apply`, `examples.notMatch[0]: the rule applies to {"command":"npm test"}`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\nlacks %q", err, want)
		}
	}
}

func TestStrictestWinsAcrossLevels(t *testing.T) {
	t.Parallel()
	rule := func(id, decision string) string {
		return fmt.Sprintf(`{"id": %q, "tool": "shell", "command": "npm", "decision": %q}`, id, decision)
	}
	tests := []struct {
		name                   string
		user, project, session string // decisions, "" for none
		trusted                bool
		want                   permission.Verdict
		wantRule               string
	}{
		{"user deny beats trusted project allow", "deny", "allow", "", true, permission.Deny, "u"},
		{"user deny beats session allow", "deny", "", "allow", true, permission.Deny, "u"},
		{"project deny beats user allow", "allow", "deny", "", false, permission.Deny, "p"},
		{"project ask beats user allow", "allow", "ask", "", true, permission.Ask, "p"},
		{"session ask beats user allow", "allow", "", "ask", true, permission.Ask, "s"},
		{"trusted project allow", "", "allow", "", true, permission.Allow, "p"},
		{"untrusted project allow ignored", "", "allow", "", false, permission.Ask, ""},
		{"untrusted project ask tightens a user allow", "allow", "ask", "", false, permission.Ask, "p"},
		{"session allow", "", "", "allow", false, permission.Allow, "s"},
		{"all allow: the first wins the tie", "allow", "allow", "allow", true, permission.Allow, "u"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			if tc.user != "" {
				w.writeUser(t, `{"version": 1, "rules": [`+rule("u", tc.user)+`]}`)
			}
			if tc.project != "" {
				w.writeProject(t, `{"version": 1, "rules": [`+rule("p", tc.project)+`]}`)
			}
			if tc.trusted {
				if _, err := policy.Trust(w.cfg, w.repo); err != nil {
					t.Fatal(err)
				}
			}
			s := w.open(t)
			if tc.session != "" {
				if err := s.AddSession(permission.Rule{ID: "s", Tool: "shell", Command: "npm", Decision: permission.Verdict(tc.session)}); err != nil {
					t.Fatal(err)
				}
			}
			d := w.check(t, s, "shell", map[string]any{"command": "npm test"})
			got := ""
			if d.Rule != nil {
				got = d.Rule.ID
			}
			if d.Decision != tc.want || got != tc.wantRule {
				t.Errorf("decision %s by rule %q, want %s by %q (%s)", d.Decision, got, tc.want, tc.wantRule, d.Reason)
			}
		})
	}
}

func TestNoRuleAllowsDestructive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeUser(t, `{"version": 1, "rules": [
  {"id": "all", "tool": "*", "decision": "allow"},
  {"id": "rm", "tool": "shell", "command": "rm", "decision": "allow"},
  {"id": "git", "tool": "shell", "command": "git push --force", "decision": "allow"}]}`)
	w.writeProject(t, `{"version": 1, "rules": [{"id": "p", "tool": "shell", "command": "rm -rf", "decision": "allow"}]}`)
	if _, err := policy.Trust(w.cfg, w.repo); err != nil {
		t.Fatal(err)
	}
	s := w.open(t)
	if err := s.AddSession(permission.Rule{ID: "s", Tool: "shell", Command: "rm -rf dist", Decision: permission.Allow}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"rm -rf dist", "git push --force origin main", "rm -r -f /"} {
		d := w.check(t, s, "shell", map[string]any{"command": cmd})
		if d.RiskAtDecision != risk.Destructive || d.Decision == permission.Allow {
			t.Errorf("%s: %s at %s (%s)", cmd, d.Decision, d.RiskAtDecision, d.Reason)
		}
		ti, _ := permission.Builtin("shell")
		if r, ok := s.SessionRuleFor(ti, map[string]any{"command": cmd}); ok {
			t.Errorf("%s: SessionRuleFor proposed %+v for a destructive call", cmd, r)
		}
		if r, ok := s.ProjectRuleFor(ti, map[string]any{"command": cmd}); ok {
			t.Errorf("%s: ProjectRuleFor proposed %+v for a destructive call", cmd, r)
		}
	}
}

func TestTrustRoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeProject(t, `{"version": 1, "rules": [{"id": "ls", "tool": "shell", "command": "ls", "decision": "allow"}]}`)
	sub := filepath.Join(w.repo, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(w.repo), "link")
	if err := os.Symlink(w.repo, link); err != nil {
		t.Fatal(err)
	}
	allowed := func() bool {
		s := w.open(t)
		return w.check(t, s, "shell", map[string]any{"command": "ls"}).Decision == permission.Allow
	}
	if allowed() {
		t.Fatal("an untrusted project's allow rule counts")
	}
	p, err := policy.Trust(w.cfg, filepath.Join(link, "src", "deep"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != w.repo {
		t.Errorf("trusted %s, want the canonical project root %s", p.Root, w.repo)
	}
	if ok, err := policy.IsTrusted(w.cfg, w.repo); !ok || err != nil {
		t.Errorf("IsTrusted = %v, %v", ok, err)
	}
	if !allowed() {
		t.Error("a trusted project's allow rule does not count")
	}
	if _, err := policy.Trust(w.cfg, w.repo); err != nil {
		t.Fatal(err)
	}
	_, removed, _, err := policy.Untrust(w.cfg, sub)
	if err != nil || !removed {
		t.Fatalf("Untrust = %v, %v", removed, err)
	}
	if allowed() {
		t.Error("the allow rule still counts after untrust")
	}
	if _, removed, _, _ := policy.Untrust(w.cfg, w.repo); removed {
		t.Error("second Untrust removed something")
	}
}

func TestAddProjectTrustsOnlyThatRule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeProject(t, `{"version": 1, "rules": [{"id": "hostile", "tool": "shell", "command": "curl", "decision": "allow"}]}`)
	s := w.open(t)
	ti, _ := permission.Builtin("shell")
	r, ok := s.ProjectRuleFor(ti, map[string]any{"command": "npm test -- --watch=false"})
	if !ok || r.Command != "npm test" {
		t.Fatalf("ProjectRuleFor = %+v, %v", r, ok)
	}
	if err := s.AddProject(r); err != nil {
		t.Fatal(err)
	}
	if err := s.AddProject(r); err != nil {
		t.Errorf("adding the same rule again: %v", err)
	}
	s2 := w.open(t)
	if d := w.check(t, s2, "shell", map[string]any{"command": "npm test"}); d.Decision != permission.Allow {
		t.Errorf("the added rule does not count: %s", d.Reason)
	}
	if d := w.check(t, s2, "shell", map[string]any{"command": "curl example.com"}); d.Decision == permission.Allow {
		t.Errorf("adding a rule trusted the file's other allow rules: %s", d.Reason)
	}
	// Someone edits the trusted rule to run anything: it no longer counts.
	src, _ := os.ReadFile(filepath.Join(w.repo, ".custom-agent", "policy.json"))
	w.writeProject(t, strings.Replace(string(src), `"command": "npm test"`, `"command": "npm"`, 1))
	if d := w.check(t, w.open(t), "shell", map[string]any{"command": "npm install evil"}); d.Decision == permission.Allow {
		t.Errorf("an edited trusted rule still counts: %s", d.Reason)
	}
	other := permission.Rule{ID: r.ID, Tool: "shell", Command: "npm run", Decision: permission.Allow}
	if err := s.AddProject(other); !errors.Is(err, policy.ErrExists) {
		t.Errorf("a different rule with the same id: %v", err)
	}
	// untrust names the rule it stops counting (issue 24 item 6).
	if _, removed, rules, err := policy.Untrust(w.cfg, w.repo); err != nil || !removed || !slices.Equal(rules, []string{r.ID}) {
		t.Errorf("Untrust = %v, %q, %v; want the rule %s named", removed, rules, err, r.ID)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeUser(t, `{"version": 1, "rules": [{"id": "a", "tool": "shell", "command": "ls", "decision": "deny"}, {"id": "b", "tool": "shell", "command": "ls", "decision": "deny"}]}`)
	w.writeProject(t, `{"version": 1, "rules": [{"id": "b", "tool": "shell", "command": "ls", "decision": "deny"}]}`)
	s := w.open(t)
	if err := s.Remove("", "b"); err == nil || !strings.Contains(err.Error(), "--level") {
		t.Errorf("ambiguous Remove: %v", err)
	}
	if err := s.Remove("", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(permission.LevelProject, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("", "nope"); !errors.Is(err, policy.ErrNotFound) {
		t.Errorf("Remove of a missing id: %v", err)
	}
	var ids []string
	for _, e := range w.open(t).Entries("") {
		ids = append(ids, string(e.Level)+":"+e.Rule.ID)
	}
	if strings.Join(ids, ",") != "user:b" {
		t.Errorf("left %v, want user:b", ids)
	}
}

// TestConcurrentAddProject: two stores, as two processes would have, add
// 50 rules each to the same project file at once; the directory lock makes
// every read-modify-write see the others, so none is lost.
func TestConcurrentAddProject(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for k := range 2 {
		s := w.open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				r := permission.Rule{ID: fmt.Sprintf("w%d-%d", k, i), Tool: "shell", Command: fmt.Sprintf("make t%d%d", k, i), Decision: permission.Deny}
				if err := s.AddProject(r); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(w.open(t).Entries(permission.LevelProject)); got != 2*n {
		t.Errorf("the project file holds %d rules, want %d", got, 2*n)
	}
}

func TestFileFormat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.open(t)
	err := s.Add(permission.LevelUser, policy.Rule{ID: "gh", Tool: "mcp__github__*", Args: map[string]string{"repo": "me/*", "owner": "me"},
		Decision: permission.Allow, Comment: "my repos"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(policy.UserFile(w.cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "rules": [
    {
      "id": "gh",
      "tool": "mcp__github__*",
      "args": {
        "owner": "me",
        "repo": "me/*"
      },
      "decision": "allow",
      "comment": "my repos"
    }
  ]
}
`
	if string(b) != want {
		t.Errorf("file:\n%s\nwant:\n%s", b, want)
	}
}

func TestFindProject(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sub := filepath.Join(w.repo, "pkg", "a")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A policy above the repository root never applies.
	writeFile(t, filepath.Join(filepath.Dir(w.repo), ".custom-agent", "policy.json"), `{"version":1,"rules":[]}`)
	p, err := policy.FindProject(sub)
	if err != nil || p.Root != w.repo || p.Exists {
		t.Errorf("no project file: %+v, %v; want root %s, not existing", p, err, w.repo)
	}
	w.writeProject(t, `{"version":1,"rules":[]}`)
	writeFile(t, filepath.Join(w.repo, "pkg", ".custom-agent", "policy.json"), `{"version":1,"rules":[]}`)
	if p, _ := policy.FindProject(sub); p.Root != filepath.Join(w.repo, "pkg") || !p.Exists {
		t.Errorf("nearest file: %+v", p)
	}
	// Outside any repository only cwd itself is searched.
	lone := filepath.Join(filepath.Dir(w.repo), "lone", "x")
	if err := os.MkdirAll(lone, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, _ := policy.FindProject(lone); p.Root != lone || p.Exists {
		t.Errorf("no repository: %+v", p)
	}
}

func TestSessionRuleFor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.open(t)
	tests := []struct {
		tool string
		args map[string]any
		want string // "" for no rule
	}{
		{"shell", map[string]any{"command": "npm test -- --watch=false"}, "command npm test"},
		{"shell", map[string]any{"command": "go test ./..."}, "command go test"},
		{"shell", map[string]any{"command": "git status"}, "command git status"},
		{"shell", map[string]any{"command": "ls -la"}, "command ls"},
		{"shell", map[string]any{"command": "go test ./a && go test ./b"}, "command go test"},
		{"shell", map[string]any{"command": "npm test && curl example.com"}, ""},
		{"shell", map[string]any{"command": "$CMD test"}, ""},
		{"shell", map[string]any{"command": "eval \"$X\""}, ""},
		{"shell", map[string]any{"command": "python -c 'print(1)'"}, ""},
		{"shell", map[string]any{"command": "bash -c 'ls'"}, ""},
		{"shell", map[string]any{"command": "rm -rf dist"}, ""},
		{"write_file", map[string]any{"path": "src/app/main.go", "content": "x"}, "path src/app/**"},
		{"write_file", map[string]any{"path": "README.md", "content": "x"}, "path README.md"},
		{"write_file", map[string]any{"path": "/etc/hosts", "content": "x"}, ""},
		{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, ""},
		{"write_file", map[string]any{"path": ".custom-agent/policy.json", "content": "x"}, ""},
		{"read_file", map[string]any{"path": ".env"}, ""},
		{"http_get", map[string]any{"url": "https://api.github.com/repos/x"}, "url api.github.com"},
	}
	for _, tc := range tests {
		ti, _ := permission.Builtin(tc.tool)
		r, ok := s.SessionRuleFor(ti, tc.args)
		got := ""
		if ok {
			switch {
			case r.Command != "":
				got = "command " + r.Command
			case r.Path != "":
				got = "path " + r.Path
			case r.URL != "":
				got = "url " + r.URL
			}
			if r.Decision != permission.Allow || r.Level != permission.LevelSession || r.ID == "" {
				t.Errorf("%s %v: rule %+v", tc.tool, tc.args, r)
			}
		}
		if got != tc.want {
			t.Errorf("%s %v: proposed %q, want %q", tc.tool, tc.args, got, tc.want)
		}
		if ok {
			if err := s.AddSession(r); err != nil {
				t.Fatalf("AddSession(%+v): %v", r, err)
			}
			if d := w.check(t, s, tc.tool, tc.args); d.Decision != permission.Allow {
				t.Errorf("%s %v: the proposed rule does not allow the call: %s", tc.tool, tc.args, d.Reason)
			}
		}
	}
	mcp := permission.ToolInfo{Name: "mcp__github__create_issue", Namespace: "mcp__github", Risk: risk.Network}
	if r, ok := s.SessionRuleFor(mcp, map[string]any{"title": "x"}); !ok || r.Tool != mcp.Name || r.Command != "" {
		t.Errorf("MCP tool: %+v, %v", r, ok)
	}
}
