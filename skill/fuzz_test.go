package skill_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/skill"
)

// FuzzParse: Parse never panics, and what it accepts keeps the rules a
// skill is offered by: a valid name equal to the folder, a description
// within limits, and a tool list without duplicates.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: x\ndescription: d\nallowed-tools: Read, Bash(git diff:*)\n---\nbody",
		"---\nname: x\ndescription: d\nallowed-tools: [a, b]\n---\n",
		"---\r\nname: x\r\ndescription: d\r\n...\r\n",
		"---\nname: &a x\ndescription: *a\n---\n",
		"---\n---\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := skill.Parse("p", "x", []byte(src))
		if err != nil {
			return
		}
		if s.Name != "x" || skill.ValidName(s.Name) != "" {
			t.Fatalf("accepted name %q", s.Name)
		}
		if strings.TrimSpace(s.Description) == "" || len([]rune(s.Description)) > skill.MaxDescriptionLen {
			t.Fatalf("accepted description %q", s.Description)
		}
		seen := map[string]bool{}
		for _, n := range s.AllowedTools {
			if seen[n] || n == "" {
				t.Fatalf("tool list %q", s.AllowedTools)
			}
			seen[n] = true
		}
	})
}
