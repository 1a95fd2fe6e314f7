package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Env is where examples are judged: the directories relative and ~ paths
// in them mean. It is a value; checking examples touches no file.
type Env struct {
	Cwd, Home, ConfigHome string
}

// exampleTools returns the tools a rule's examples are calls of: the tool
// it names, or, for a tool glob, every built-in tool the glob matches. A
// tool that is not built in (an MCP tool, "mcp__server__name") is judged by
// its name alone, at execute risk, with no argument roles.
func exampleTools(tool string) ([]permission.ToolInfo, error) {
	if t, ok := permission.Builtin(tool); ok {
		return []permission.ToolInfo{t}, nil
	}
	if !strings.ContainsAny(tool, `*?[]{}\`) {
		ns := ""
		if strings.HasPrefix(tool, "mcp__") {
			if i := strings.Index(tool[5:], "__"); i >= 0 {
				ns = tool[:5+i]
			}
		}
		return []permission.ToolInfo{{Name: tool, Namespace: ns, Risk: risk.Execute, Kind: permission.KindOther}}, nil
	}
	var out []permission.ToolInfo
	for _, t := range permission.Builtins() {
		if ok, _ := doublestar.Match(tool, t.Name); ok {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the tool glob %q matches no built-in tool, so its examples cannot be judged; name the tool in full", tool)
	}
	return out, nil
}

// applies reports whether rule r, alone in a policy, decides the call of
// tool t with args, and if not, the engine's reason.
func applies(r permission.Rule, t permission.ToolInfo, args map[string]any, env Env) (bool, string) {
	pol, err := permission.Compile([]permission.Rule{r})
	if err != nil {
		return false, err.Error()
	}
	// An example runs as in a session whose sandbox confines it (the
	// built-in go rules hold only there).
	req := permission.Request{Tool: t, Args: args, Cwd: env.Cwd, Home: env.Home, ConfigHome: env.ConfigHome, Policy: pol,
		Sandbox: &permission.SandboxFacts{}}
	// An example is a call on no particular file system: the trees it
	// reads recursively, the repositories whose tracked files it prints,
	// and those it runs git in, count as read and holding no secret or
	// program, so that `grep -rn TODO
	// src/` and `git diff` show the rule's shape. A real call is judged by
	// what the caller found.
	if dirs := permission.TreesToScan(req); len(dirs) > 0 {
		req.Trees = make(map[string]permission.Tree, len(dirs))
		for _, d := range dirs {
			req.Trees[d] = permission.Tree{Complete: true}
		}
	}
	if dirs := permission.ReposToScan(req); len(dirs) > 0 {
		req.Repos = make(map[string]permission.Repo, len(dirs))
		for _, d := range dirs {
			req.Repos[d] = permission.Repo{Checked: true}
		}
	}
	if dirs := permission.GitConfigsToRead(req); len(dirs) > 0 {
		req.GitConfigs = make(map[string]string, len(dirs))
		for _, d := range dirs {
			req.GitConfigs[d] = ""
		}
	}
	d := permission.Engine{}.Check(req)
	if d.Rule != nil && d.Rule.ID == r.ID {
		return true, d.Reason
	}
	return false, d.Reason
}

// ExampleError is a rule example that does not do what it says.
type ExampleError struct {
	RuleID string
	// Field is "examples.match[i]" or "examples.notMatch[i]".
	Field string
	Why   string
}

func (e *ExampleError) Error() string { return e.Why }

// checkExamples runs a rule's examples and returns one error per failing
// example.
func checkExamples(r *Rule, level permission.RuleLevel, env Env) []*ExampleError {
	if r.Examples == nil {
		return nil
	}
	tools, err := exampleTools(r.Tool)
	if err != nil {
		return []*ExampleError{{RuleID: r.ID, Field: "examples", Why: err.Error()}}
	}
	pr := r.Permission(level, "")
	var out []*ExampleError
	for i, args := range r.Examples.Match {
		ok, why := false, ""
		for _, t := range tools {
			if ok, why = applies(pr, t, args, env); ok {
				break
			}
		}
		if !ok {
			out = append(out, &ExampleError{RuleID: r.ID, Field: fmt.Sprintf("examples.match[%d]", i),
				Why: fmt.Sprintf("the rule does not apply to %s; the engine says: %s", showArgs(args), why)})
		}
	}
	for i, args := range r.Examples.NotMatch {
		for _, t := range tools {
			if ok, _ := applies(pr, t, args, env); ok {
				out = append(out, &ExampleError{RuleID: r.ID, Field: fmt.Sprintf("examples.notMatch[%d]", i),
					Why: fmt.Sprintf("the rule applies to %s (tool %s), which it should not", showArgs(args), t.Name)})
				break
			}
		}
	}
	return out
}

func showArgs(args map[string]any) string {
	b, err := permission.CanonicalArgs(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

// examplesError turns failing examples of a parsed file into one error,
// each placed at its example.
func (p *parsed) examplesError(errs []*ExampleError) error {
	var all []error
	for _, ee := range errs {
		i := p.indexOf(ee.RuleID)
		if i < 0 {
			all = append(all, &Error{Path: p.path, RuleID: ee.RuleID, Field: ee.Field, Err: ee})
			continue
		}
		all = append(all, p.ruleError(i, ee.Field, ee))
	}
	return errors.Join(all...)
}

func (p *parsed) indexOf(id string) int {
	for i := range p.ents {
		if p.ents[i].Rule.ID == id {
			return i
		}
	}
	return -1
}
