package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
)

// run finds the user's and the project's skills, reports a bad one on
// stderr with its file and line, offers use_skill, and the skill narrows
// the calls after it until the turn ends (docs/skills.md).
func TestRunOffersSkills(t *testing.T) {
	repo, cfg := policyWorld(t)
	write := func(dir, body string) {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644)
	}
	write(filepath.Join(cfg, "custom-agent", "skills", "review"), "---\nname: review\ndescription: Review.\nallowed-tools: Read, Grep\n---\nRead first.\n")
	write(filepath.Join(repo, ".custom-agent", "skills", "bad"), "---\nname: Bad\ndescription: d\n---\n")
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"toolCalls":[{"id":"t1","name":"use_skill","args":{"name":"review"}}]}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"echo hi"}}]}
{"text":"the skill does not allow commands"}
`), 0o644)
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--cwd", repo, "--json", "review")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if want := "custom-agent: skill: " + filepath.Join(repo, ".custom-agent", "skills", "bad", "SKILL.md") + ":2: name:"; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not report the bad skill (%q):\n%s", want, errOut)
	}
	var types []string
	var shell event.PermissionResolvedPayload
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		types = append(types, string(e.Type))
		if e.Type == event.PermissionResolved && strings.Contains(string(e.Payload), `"t2"`) {
			json.Unmarshal(e.Payload, &shell)
		}
	}
	got := strings.Join(types, " ")
	if !strings.Contains(got, "tool.completed skill.activated context.built") || !strings.Contains(got, "skill.ended turn.completed") {
		t.Errorf("events: %s", got)
	}
	if shell.Decision != "deny" || shell.SourcedFrom != "skill" {
		t.Errorf("shell while the skill is active: %+v, want denied by the skill", shell)
	}
}
