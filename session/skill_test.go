package session_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/skill"
	"github.com/custom-agent/custom-agent/tools"
	"github.com/custom-agent/custom-agent/tools/skilltool"
)

// skillFlow is a golden flow with skills: user skills (under the config
// home) and project skills (in cwd, a repository), the project trusted or
// not, and a user policy file.
type skillFlow struct {
	name           string
	user, project  map[string]string // folder -> front matter
	trusted        bool
	userPolicy     string
	prompts        []string
	answers        []string
	script         string
	setup          func(t *testing.T, cwd string)
	wantNoActivate bool
}

var skillFlows = []skillFlow{
	// Issue 13 §3: the model uses a skill allowing read_file and
	// search_text; read_file runs, shell is denied by the skill (sourcedFrom
	// skill) without a question; the skill ends with the turn, and in the
	// next turn shell is asked again as by default.
	{name: "skill-narrows-tools", prompts: []string{"review the readme", "now run it"}, answers: []string{"deny"},
		user: map[string]string{"review": "name: review\ndescription: Review the README.\nallowed-tools: Read, Grep"},
		setup: func(t *testing.T, cwd string) {
			os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# demo\n"), 0o644)
		},
		script: `{"toolCalls": [{"id": "tc_1", "name": "use_skill", "args": {"name": "review"}}]}
{"toolCalls": [{"id": "tc_2", "name": "read_file", "args": {"path": "README.md"}}]}
{"toolCalls": [{"id": "tc_3", "name": "shell", "args": {"command": "git status"}}]}
{"text": "the skill does not let me run commands."}
{"toolCalls": [{"id": "tc_4", "name": "shell", "args": {"command": "printf ok"}}]}
{"text": "you said no."}`},
	// A skill never grants: an untrusted project's skill listing shell
	// does not allow a shell call the default table asks, and its body
	// reaches the model marked as the repository's.
	{name: "skill-never-grants", prompts: []string{"build it"}, answers: []string{"deny"},
		project: map[string]string{"build": "name: build\ndescription: Build the project.\nallowed-tools: Bash, Read"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "use_skill", "args": {"name": "build"}}]}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "printf built"}}]}
{"text": "you said no."}`},
	// Once the project is trusted (custom-agent trust), its skill reaches
	// the model without the untrusted repository's mark.
	{name: "skill-from-trusted-project", prompts: []string{"build it"}, trusted: true,
		project: map[string]string{"build": "name: build\ndescription: Build the project.\nallowed-tools: Bash, Read"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "use_skill", "args": {"name": "build"}}]}
{"text": "following the build steps."}`},
	// A second skill narrows further: the intersection of both lists.
	// use_skill is allowed only because the first skill lists it; after
	// the second, only read_file is left, so search_text and use_skill are
	// denied.
	{name: "skill-second-narrows-further", prompts: []string{"look around"},
		user: map[string]string{
			"explore": "name: explore\ndescription: Explore.\nallowed-tools: [read_file, search_text, use_skill]",
			"focus":   "name: focus\ndescription: Focus.\nallowed-tools: read_file, shell",
		},
		setup: func(t *testing.T, cwd string) { os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a\n"), 0o644) },
		script: `{"toolCalls": [{"id": "tc_1", "name": "use_skill", "args": {"name": "explore"}}]}
{"toolCalls": [{"id": "tc_2", "name": "use_skill", "args": {"name": "focus"}}]}
{"toolCalls": [{"id": "tc_3", "name": "search_text", "args": {"pattern": "a"}}]}
{"toolCalls": [{"id": "tc_4", "name": "use_skill", "args": {"name": "explore"}}]}
{"toolCalls": [{"id": "tc_5", "name": "read_file", "args": {"path": "a.txt"}}]}
{"text": "done."}`},
	// use_skill is a tool like any other: a policy rule can deny it, and
	// then no skill is activated.
	{name: "use-skill-denied-by-policy", prompts: []string{"review"}, wantNoActivate: true,
		user:       map[string]string{"review": "name: review\ndescription: Review.\nallowed-tools: Read"},
		userPolicy: `{"version": 1, "rules": [{"id": "no-skills", "tool": "use_skill", "decision": "deny"}]}`,
		script: `{"toolCalls": [{"id": "tc_1", "name": "use_skill", "args": {"name": "review"}}]}
{"text": "skills are off."}`},
}

func TestSkillFlows(t *testing.T) {
	for _, f := range skillFlows {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			got := runSkillFlow(t, f)
			path := filepath.Join("testdata", f.name+".golden")
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if string(want) != got {
				t.Errorf("event chain differs from %s (go test -update rewrites it):\n%s", path, got)
			}
			if activated := strings.Contains(got, "skill.activated"); activated == f.wantNoActivate {
				t.Errorf("skill.activated recorded: %v, want %v", activated, !f.wantNoActivate)
			}
			if marked := strings.Contains(got, "which the user has not trusted"); f.project != nil && marked == f.trusted {
				t.Errorf("project skill marked as untrusted: %v, with the project trusted: %v", marked, f.trusted)
			}
			if strings.Count(got, "skill.activated") != strings.Count(got, "skill.ended") {
				t.Errorf("every activation must end: %d activated, %d ended", strings.Count(got, "skill.activated"), strings.Count(got, "skill.ended"))
			}
		})
	}
}

var (
	outputSize   = regexp.MustCompile(`("bytes"|"stdoutBytes"):\d+`)
	outputDigest = regexp.MustCompile(`"sha256:[0-9a-f]{64}"`)
)

// skillRecorder notes what each model call was shown, as recordingModel
// does, with the temporary directories replaced before lines are cut.
type skillRecorder struct {
	model.Gateway
	clean *strings.Replacer
	mu    sync.Mutex
	notes []string
}

func (m *skillRecorder) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	m.mu.Lock()
	var b strings.Builder
	fmt.Fprintf(&b, "model call with %d messages, %d tools offered", len(req.Messages), len(req.Tools))
	for _, msg := range req.Messages[max(0, len(req.Messages)-2):] {
		if msg.Role == model.RoleTool {
			fmt.Fprintf(&b, "\n      tool %s error=%v: %s", msg.ToolCallID, msg.IsError, firstLine(m.clean.Replace(msg.Content)))
		}
	}
	m.notes = append(m.notes, b.String())
	m.mu.Unlock()
	return m.Gateway.Stream(ctx, req)
}

func runSkillFlow(t *testing.T, f skillFlow) string {
	t.Helper()
	data := t.TempDir()
	cwd, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	configHome := filepath.Join(home, ".config")
	os.Mkdir(filepath.Join(cwd, ".git"), 0o755)
	write := func(dir string, skills map[string]string) {
		for folder, front := range skills {
			d := filepath.Join(dir, folder)
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, skill.FileName), []byte("---\n"+front+"\n---\nThe steps of "+folder+".\n"), 0o644)
		}
	}
	write(filepath.Join(configHome, skill.UserDir), f.user)
	write(filepath.Join(cwd, skill.ProjectDir), f.project)
	if f.userPolicy != "" {
		os.MkdirAll(filepath.Join(configHome, policy.AppDir), 0o755)
		os.WriteFile(policy.UserFile(configHome), []byte(f.userPolicy), 0o644)
	}
	if f.trusted {
		if _, err := policy.Trust(configHome, cwd); err != nil {
			t.Fatal(err)
		}
	}
	if f.setup != nil {
		f.setup(t, cwd)
	}
	cat, problems := skill.Discover(skill.Options{Cwd: cwd, ConfigHome: configHome,
		Trusted: func(root string) (bool, error) { return policy.IsTrusted(configHome, root) }})
	if len(problems) > 0 {
		t.Fatalf("skills: %v", problems)
	}
	router := tools.NewRouter()
	router.Register(skilltool.New(cat))

	store, err := sqlitestore.Open(context.Background(), filepath.Join(data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(data, "artifacts"))
	m, err := script.Parse([]byte(f.script))
	if err != nil {
		t.Fatal(err)
	}
	rec := &skillRecorder{Gateway: m, clean: strings.NewReplacer(cwd, "<cwd>", home, "<home>")}
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	ctx := context.Background()
	ans := &answers{list: f.answers}
	cfg := session.Config{
		Log: store, Model: rec, Router: router, Artifacts: arts, Approver: ans,
		Now: func() time.Time {
			clockMu.Lock()
			defer clockMu.Unlock()
			clock = clock.Add(time.Millisecond)
			return clock
		},
		NewID: func() string { return "sess-1" },
	}
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: configHome, Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(cfg, session.Info{Cwd: cwd, Home: home, ConfigHome: configHome, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}})
	var out strings.Builder
	for _, p := range f.prompts {
		for e, err := range s.RunTurn(ctx, p) {
			if err != nil {
				t.Fatalf("turn failed: %v", err)
			}
			line := normalise(t, e, cwd, home)
			if e.Type == event.ToolCompleted && strings.Contains(line, "[skill ") {
				// The output names the skill's path, a temporary
				// directory: its size and digest vary with it.
				line = outputSize.ReplaceAllString(line, `$1:"<n>"`)
				line = outputDigest.ReplaceAllString(line, `"sha256:<output>"`)
			}
			fmt.Fprintf(&out, "%3d %-26s %s\n", e.Seq, e.Type, line)
		}
	}
	if err := store.Verify(ctx, "sess-1"); err != nil {
		t.Fatalf("chain does not verify: %v", err)
	}
	checkReplay(t, store, "sess-1")
	out.WriteString("--- what the model was shown\n")
	for _, n := range rec.notes {
		out.WriteString("  " + n + "\n")
	}
	fmt.Fprintf(&out, "--- asked: %v\n", ans.asked)
	return out.String()
}
