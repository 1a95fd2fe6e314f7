package policy

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// SessionRuleFor proposes the rule an "allow for this session" answer to a
// call of tool t with args would create, to be shown to the user before it
// is made (and then given to AddSession). It reports false when no rule
// should be offered: for a destructive call; for a shell command that
// cannot be judged statically, builds its program at run time, or runs
// several programs; for a path outside the working directory or a
// credential or protected location; for a call whose arguments hold what
// looks like a secret (package secrets), and for a rule that would hold
// one, since a rule is logged, shown and written in plain text; and
// whenever the rule, once made, would not allow this very call.
//
// The shapes: for a shell command, its program and subcommand ("npm test",
// "go test", "git status"; the program alone when the next word is an
// option, never for an interpreter such as bash or python alone); for a
// file tool, a glob of the file's directory relative to the working
// directory ("src/**"), or the file itself at the top; for an HTTP tool,
// the URL's host; for a tool whose arguments the engine does not analyse
// (an MCP tool), the tool itself.
func (s *Store) SessionRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	return s.ruleFor(permission.LevelSession, t, args)
}

// ProjectRuleFor proposes the rule an "always allow in this project" answer
// would write (given to AddProject). The shapes and refusals are those of
// SessionRuleFor.
func (s *Store) ProjectRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	return s.ruleFor(permission.LevelProject, t, args)
}

func (s *Store) ruleFor(level permission.RuleLevel, t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	if !secrets.CollectValue(args).Empty() {
		return permission.Rule{}, false
	}
	env := s.env
	req := permission.Request{Tool: t, Args: args, Cwd: env.Cwd, Home: env.Home, ConfigHome: env.ConfigHome}
	req.Resolved = resolve.Map(permission.PathsToResolve(req))
	var eng permission.Engine
	if d := eng.Check(req); d.RiskAtDecision >= risk.Destructive {
		return permission.Rule{}, false
	}
	r := permission.Rule{Level: level, Tool: t.Name, Decision: permission.Allow}
	var what string
	switch {
	case t.CommandArg != "":
		cmd, ok := args[t.CommandArg].(string)
		if !ok {
			return r, false
		}
		if r.Command, ok = commandPrefix(cmd, env); !ok {
			return r, false
		}
		what = r.Command
	case t.URLArg != "":
		raw, ok := args[t.URLArg].(string)
		if !ok {
			return r, false
		}
		if r.URL, ok = urlHost(raw); !ok {
			return r, false
		}
		what = r.URL
	case len(t.PathArgs) > 0 || t.PatchArg != "":
		var ok bool
		if r.Path, ok = pathGlob(t, args, env); !ok {
			return r, false
		}
		what = strings.TrimSuffix(r.Path, "/**")
	}
	r.ID = slug(t.Name, what)
	if ruleHoldsSecret(FromPermission(r)) {
		return permission.Rule{}, false
	}
	pol, err := permission.Compile([]permission.Rule{r})
	if err != nil {
		return r, false
	}
	req.Policy = pol
	if d := eng.Check(req); d.Decision != permission.Allow || d.Rule == nil || d.Rule.ID != r.ID {
		return r, false
	}
	return r, true
}

// ruleHoldsSecret reports whether any field of a rule holds what looks
// like a secret: a shell word the parser joined from quoted pieces
// (sk-proj-"…") shows none in the arguments, but would in the rule.
func ruleHoldsSecret(r Rule) bool {
	raw, err := json.Marshal(r)
	return err != nil || secrets.Holds(raw)
}

// bareless are programs whose name alone allows running anything: they
// are only proposed with a subcommand or script.
var bareless = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python2": true, "python3": true, "node": true, "deno": true, "bun": true,
	"perl": true, "ruby": true, "php": true, "lua": true, "env": true, "sudo": true, "doas": true,
	"xargs": true, "eval": true, "exec": true, "command": true, "nohup": true, "nice": true,
	"timeout": true, "time": true, "watch": true, "ssh": true, "npx": true, "docker": true,
}

// commandPrefix returns the program and subcommand every simple command of
// cmd shares, if they share one.
func commandPrefix(cmd string, env Env) (string, bool) {
	res := shellrisk.Analyze(cmd, shellrisk.Env{Cwd: env.Cwd, Home: env.Home})
	if res.Opaque || len(res.Commands) == 0 {
		return "", false
	}
	prefix := ""
	for _, c := range res.Commands {
		if c.Dynamic || len(c.Argv) == 0 || c.Argv[0] == "" {
			return "", false
		}
		words := c.Argv[:1]
		if len(c.Argv) > 1 && c.Argv[1] != "" && !strings.HasPrefix(c.Argv[1], "-") {
			words = c.Argv[:2]
		}
		if len(words) == 1 && bareless[words[0]] {
			return "", false
		}
		for _, w := range words {
			if strings.TrimSpace(w) != w || strings.ContainsAny(w, " \t\n") {
				return "", false
			}
		}
		p := strings.Join(words, " ")
		if prefix != "" && p != prefix {
			return "", false
		}
		prefix = p
	}
	return prefix, true
}

// urlHost returns "host[:port]", or "scheme://host[:port]" for a scheme
// other than http and https.
func urlHost(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || u.User != nil {
		return "", false
	}
	host := strings.ToLower(u.Host)
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return host, true
	case "":
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// pathGlob returns the glob of the directory, inside cwd, that holds every
// path the call touches.
func pathGlob(t permission.ToolInfo, args map[string]any, env Env) (string, bool) {
	penv := pathrisk.Env{Cwd: env.Cwd, Home: env.Home, ConfigHome: env.ConfigHome}
	dirTool := t.PathDefaultsToCwd || t.PathsRecursive
	var paths []string
	for i, name := range t.PathArgs {
		v, ok := args[name]
		if !ok {
			if i == 0 && t.PathDefaultsToCwd {
				paths = append(paths, ".")
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		paths = append(paths, s)
	}
	if t.PatchArg != "" {
		s, _ := args[t.PatchArg].(string)
		pp := permission.PatchPaths(s)
		if len(pp) == 0 {
			return "", false
		}
		for _, p := range pp {
			paths = append(paths, p.Path)
		}
	}
	if len(paths) == 0 {
		return "", false
	}
	common, file := "", ""
	for _, raw := range paths {
		c, ok := pathrisk.Canonical(raw, penv)
		if !ok || !pathrisk.Within(c, env.Cwd) || c == env.Cwd && !dirTool {
			return "", false
		}
		if pathrisk.Sensitive(c, penv, t.PathsWrite || t.PatchArg != "") != nil {
			return "", false
		}
		dir := c
		if !dirTool {
			dir, file = filepath.Dir(c), c
		}
		if common == "" {
			common = dir
		}
		for !pathrisk.Within(dir, common) {
			common = filepath.Dir(common)
		}
	}
	if common == env.Cwd {
		// A glob of the whole tree would be a bare "**": offer the one file
		// at the top instead, or nothing.
		if dirTool || len(paths) != 1 {
			return "", false
		}
		rel, _ := filepath.Rel(env.Cwd, file)
		return rel, true
	}
	rel, err := filepath.Rel(env.Cwd, common)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel) + "/**", true
}

// slug makes a rule id from the tool and what the rule names:
// "shell-npm-test", "write_file-src", "http_get-api.github.com".
func slug(tool, what string) string {
	var b strings.Builder
	b.WriteString(tool)
	dash := true
	if what != "" {
		b.WriteByte('-')
	}
	for _, r := range strings.ToLower(what) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// SuggestID returns an id for a rule made without one, from its tool and
// first matcher: "shell-npm-test", "read_file-docs".
func SuggestID(r Rule) string {
	what := r.Command
	switch {
	case what != "":
	case r.Path != "":
		what = strings.TrimSuffix(r.Path, "/**")
	case r.URL != "":
		what = r.URL
	case len(r.Args) > 0:
		keys := make([]string, 0, len(r.Args))
		for k := range r.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		what = keys[0] + "-" + r.Args[keys[0]]
	}
	return slug(r.Tool, what)
}
