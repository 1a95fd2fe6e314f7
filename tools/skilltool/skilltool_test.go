package skilltool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/skill"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools/skilltool"
)

func catalog(t *testing.T) *skill.Catalog {
	t.Helper()
	parse := func(folder, src string, source skill.Source, trusted bool) *skill.Skill {
		s, err := skill.Parse("/skills/"+folder+"/SKILL.md", folder, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Source, s.Trusted, s.Dir = source, trusted, "/skills/"+folder
		return s
	}
	return skill.NewCatalog(
		parse("review", "---\nname: review\ndescription: Review\n  the diff.\nallowed-tools: Read, Grep\n---\nRead the diff.\n", skill.SourceUser, true),
		parse("lint", "---\nname: lint\ndescription: Run the linters.\n---\nRun make lint.\n", skill.SourceProject, false),
		parse("quiet", "---\nname: quiet\ndescription: Think only.\nallowed-tools: []\n---\nThink.\n", skill.SourceProject, true),
	)
}

func run(t *testing.T, tl *skilltool.Tool, name string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	_, err := tl.Run(context.Background(), tool.Call{ID: "c1", Args: map[string]any{"name": name}}, tool.Output{Stdout: &out, Stderr: io.Discard})
	return out.String(), err
}

func TestInfoAndSchema(t *testing.T) {
	t.Parallel()
	tl := skilltool.New(catalog(t))
	info := tl.Info()
	if info.Name != skill.ToolName || info.Risk != risk.Read || info.AllowedModes != nil {
		t.Errorf("info = %+v; want use_skill, read, every mode", info)
	}
	var s struct {
		Properties struct {
			Name struct {
				Enum        []string `json:"enum"`
				Description string   `json:"description"`
			} `json:"name"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(info.Schema), &s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Properties.Name.Enum, " "); got != "lint quiet review" {
		t.Errorf("enum = %s", got)
	}
	for _, want := range []string{"- review: Review the diff.", "- lint: Run the linters. (from the repository, which the user has not trusted)", "- quiet: Think only."} {
		if !strings.Contains(s.Properties.Name.Description, want) {
			t.Errorf("description %q lacks %q", s.Properties.Name.Description, want)
		}
	}
	// The router takes it, and its schema refuses a name not offered.
	r := tool.NewRouter()
	r.Register(tl)
	if _, err := r.Validate(skill.ToolName, json.RawMessage(`{"name":"review"}`)); err != nil {
		t.Errorf("a listed name: %v", err)
	}
	var ae *tool.ArgsError
	if _, err := r.Validate(skill.ToolName, json.RawMessage(`{"name":"../../etc/passwd"}`)); !errors.As(err, &ae) {
		t.Errorf("a name not offered: err = %v, want an ArgsError", err)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	tl := skilltool.New(catalog(t))
	tests := []struct {
		name      string
		want      []string
		untrusted bool
	}{
		{"review", []string{"[skill review, a user skill]\n[read from /skills/review/SKILL.md; files it names are relative to /skills/review]", "only these tools can be called, each still decided by the policy: read_file, search_text", "\n\nRead the diff.\n"}, false},
		{"lint", []string{"[skill lint, a project skill]", "not trusted", "cannot give you any permission", "does not narrow the tools", "Run make lint."}, true},
		{"quiet", []string{"no tool can be called", "Think."}, false},
	}
	for _, tt := range tests {
		out, err := run(t, tl, tt.name)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, out)
			}
		}
		if got := strings.Contains(out, "not trusted"); got != tt.untrusted {
			t.Errorf("%s: marked untrusted = %v, want %v", tt.name, got, tt.untrusted)
		}
	}
	if _, err := run(t, tl, "nope"); err == nil || !strings.Contains(err.Error(), `no skill is named "nope"`) {
		t.Errorf("unknown skill: err = %v", err)
	}
}

func TestNewPanicsWithoutSkills(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New with an empty catalog did not panic")
		}
	}()
	skilltool.New(skill.NewCatalog())
}
