package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/skill"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools"
)

func TestSkills(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo, cfg := filepath.Join(base, "repo"), filepath.Join(base, "cfg")
	write := func(dir, body string) {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, skill.FileName), []byte(body), 0o644)
	}
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	write(filepath.Join(repo, skill.ProjectDir, "lint"), "---\nname: lint\ndescription: d\n---\n")
	// A folder named to rewrite the terminal's title when printed.
	write(filepath.Join(repo, skill.ProjectDir, "x\x1b]0;owned\x07"), "---\nname: x\ndescription: d\n---\n")

	router := tools.NewRouter()
	cat, problems := Skills(router, repo, cfg)
	if cat.Len() != 1 {
		t.Fatalf("offered %d skills, want lint only", cat.Len())
	}
	if _, err := router.Resolve(skill.ToolName); err != nil {
		t.Errorf("use_skill not registered: %v", err)
	}
	if len(problems) != 1 {
		t.Fatalf("problems %v, want the folder's", problems)
	}
	var se *skill.Error
	if msg := problems[0].Error(); strings.ContainsAny(msg, "\x1b\x07") || !errors.As(problems[0], &se) {
		t.Errorf("problem %q is not escaped, or not a *skill.Error underneath", msg)
	}

	// No skills: no use_skill offered.
	empty := tool.NewRouter()
	if cat, _ := Skills(empty, t.TempDir(), ""); cat.Len() != 0 || len(empty.Names()) != 0 {
		t.Errorf("with no skills the router holds %v", empty.Names())
	}
}
