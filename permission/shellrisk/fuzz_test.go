package shellrisk

import (
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze checks the invariants that hold for any input: no panic, risk
// at least execute, Opaque whenever the command does not parse, spans inside
// the command, and bounded output.
func FuzzAnalyze(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.cmd)
	}
	f.Add(script2KB)
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > MaxInput+1 {
			cmd = cmd[:MaxInput+1]
		}
		start := time.Now()
		r := Analyze(cmd, testEnv)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Analyze(%q) took %v", cmd, d)
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
