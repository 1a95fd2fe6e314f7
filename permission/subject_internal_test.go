package permission

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestSubjectThen pins the subject of a reason word for word: the tool,
// the top finding (its text quoted unless the why already holds it), how
// many more findings there are, and the clause after it.
func TestSubjectThen(t *testing.T) {
	t.Parallel()
	rm := risk.Finding{Risk: risk.Destructive, Text: "rm -rf dist", Why: "rm -r deletes dist and everything below, which cannot be undone"}
	pkg := risk.Finding{Risk: risk.Network, Text: "npm ci", Why: "npm ci downloads packages"}
	many := make([]risk.Finding, 12)
	for i := range many {
		many[i] = pkg
	}
	tests := []struct {
		name     string
		findings []risk.Finding
		level    risk.Level
		tail     string
		want     string
	}{
		{"no finding", nil, risk.Write, "; write calls are asked by default.", "shell has base risk write and nothing in its arguments raised it; write calls are asked by default."},
		{"text quoted", []risk.Finding{rm}, risk.Destructive, "; destructive calls are asked every time.", "shell: `rm -rf dist` rm -r deletes dist and everything below, which cannot be undone; destructive calls are asked every time."},
		{"text in why", []risk.Finding{pkg}, risk.Network, "", "shell: npm ci downloads packages"},
		{"one more", []risk.Finding{pkg, rm}, risk.Destructive, ".", "shell: npm ci downloads packages (and 1 more finding)."},
		{"eleven more", many, risk.Network, "", "shell: npm ci downloads packages (and 11 more findings)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &Request{Tool: ToolInfo{Name: "shell"}}
			j := &judge{findings: tc.findings, level: tc.level}
			if got := subjectThen(req, j, tc.tail); got != tc.want {
				t.Errorf("subjectThen = %q\nwant          %q", got, tc.want)
			}
			if got := subject(req, j) + tc.tail; got != tc.want {
				t.Errorf("subject + tail = %q\nwant            %q", got, tc.want)
			}
		})
	}
}
