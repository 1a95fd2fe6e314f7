package permission_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

func TestExactCommand(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"curl -s https://x.example/a?b=1", "echo '*' [x] {a,b} \\\\", "ls"} {
		r := permission.Rule{ID: "x", Level: permission.LevelSession, Tool: "shell", Command: "echo",
			Args: map[string]string{"command": permission.QuoteGlob(cmd)}, Decision: permission.Allow}
		got, ok := permission.ExactCommand(r)
		if !ok || got != cmd {
			t.Errorf("ExactCommand(QuoteGlob(%q)) = %q, %v", cmd, got, ok)
		}
		if _, err := permission.Compile([]permission.Rule{r}); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
	for _, r := range []permission.Rule{
		{Tool: "shell", Command: "echo", Args: map[string]string{"command": "echo *"}},
		{Tool: "shell", Args: map[string]string{"command": "echo"}},
		{Tool: "shell", Command: "echo", Args: map[string]string{"cwd": "x"}},
		{Tool: "read_file", Command: "echo", Args: map[string]string{"command": "echo"}},
	} {
		if got, ok := permission.ExactCommand(r); ok {
			t.Errorf("ExactCommand(%+v) = %q", r, got)
		}
	}
}
