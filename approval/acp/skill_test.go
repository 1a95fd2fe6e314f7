package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval/acp"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
)

// TestSkillsInAnEditorSession: an editor's session is offered the skills
// of the user's configuration directory through use_skill (the runtime's
// SessionTools, as custom-agent acp builds every session's tools), and an
// active skill narrows what runs as in run: shell, which the skill does not
// list, is denied by the skill without a question.
func TestSkillsInAnEditorSession(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.home, ".config", "custom-agent", "skills", "review")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: review\ndescription: Review the code.\nallowed-tools: Read, Grep\n---\nRead first.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.seen = &toolsSeen{names: map[string]bool{}}
	e.mcp = func(rt *app.Runtime) func(context.Context, string, map[string]config.Server) (acp.SessionTools, error) {
		getenv := func(k string) string {
			switch k {
			case "HOME":
				return e.home
			case "XDG_CONFIG_HOME":
				return ""
			}
			return os.Getenv(k)
		}
		return func(ctx context.Context, cwd string, servers map[string]config.Server) (acp.SessionTools, error) {
			router, m, errs := rt.SessionTools(ctx, servers, cwd, getenv)
			return acp.SessionTools{Router: router, Failed: errs, Close: m.Close}, nil
		}
	}
	a := e.start(e.script(
		`{"toolCalls":[{"id":"tc_1","name":"use_skill","args":{"name":"review"}}]}`,
		`{"toolCalls":[{"id":"tc_2","name":"shell","args":{"command":"echo hi"}}]}`,
		finalOK))
	c := e.connect(a, pick("allow_once"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "review this")
	if !e.seen.has("use_skill") {
		t.Fatal("the model was not offered use_skill")
	}
	if c.c.asked != 0 {
		t.Errorf("asked %d times; want none (use_skill reads, shell is denied by the skill)", c.c.asked)
	}
	evs := a.events(t, string(id))
	var types []string
	for _, ev := range evs {
		types = append(types, string(ev.Type))
	}
	if !slices.Contains(types, string(event.SkillActivated)) || !slices.Contains(types, string(event.SkillEnded)) {
		t.Errorf("events %s: want skill.activated and skill.ended", strings.Join(types, " "))
	}
	res := resolved(t, evs)
	if len(res) != 2 || res[0].Decision != "allow" || res[1].Decision != "deny" || res[1].SourcedFrom != "skill" {
		t.Errorf("permission.resolved = %+v; want use_skill allowed, then shell denied by the skill", res)
	}
}
