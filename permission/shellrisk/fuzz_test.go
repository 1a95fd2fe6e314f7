package shellrisk

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze checks the invariants that hold for any input: no panic, risk
// at least execute, Opaque whenever the command does not parse, spans inside
// the command, and bounded output and work (counted, never timed).
func FuzzAnalyze(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.cmd)
	}
	f.Add(script2KB)
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > MaxInput+1 {
			cmd = cmd[:MaxInput+1]
		}
		r, work := analyzeCounting(cmd, testEnv)
		if work > workBound(len(cmd)) {
			t.Fatalf("Analyze(%q): %d steps of work, more than %d", cmd, work, workBound(len(cmd)))
		}
		checkInvariants(t, cmd, r)
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), ""); err != nil && !r.Opaque {
			t.Errorf("Analyze(%q) is not Opaque but the command does not parse: %v", cmd, err)
		}
		if len(r.Commands) > maxCommands || len(r.Findings) > 16*maxCommands+len(cmd) {
			t.Errorf("Analyze(%q): unbounded output: %d commands, %d findings", cmd, len(r.Commands), len(r.Findings))
		}
	})
}
