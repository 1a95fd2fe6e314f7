package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, strings.NewReader(""), &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut.String())
		}
		if want := "custom-agent-gate " + buildinfo.Version() + "\n"; out.String() != want {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"run", "hello"}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("custom-agent-gate run: exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `unknown command "run"`) {
		t.Errorf("custom-agent-gate run: %q", errOut.String())
	}
}

// TestHookSignalAndDeadline: the gate's context (cancelled by SIGTERM or
// SIGINT) and --deadline both block a hook call whose event never
// arrives whole: exit 2, the reason on stderr, nothing on stdout.
func TestHookSignalAndDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		args   []string
		want   string
	}{
		{"signal", true, []string{"hook", "claude-code", "--no-record"}, "interrupted"},
		{"deadline", false, []string{"hook", "gemini-cli", "--no-record", "--deadline", "1ms"}, "no decision within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			stdin, w := io.Pipe() // never written: the read waits
			defer w.Close()
			var out, errOut bytes.Buffer
			if code := run(ctx, tc.args, stdin, &out, &errOut); code != 2 || out.Len() > 0 || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
			}
		})
	}
}

// TestHookWithoutAKnownAgent: settings that name no agent, or one this
// build does not know, block the call (exit 2), never print help and exit
// 0, which Claude Code reads as "go ahead".
func TestHookWithoutAKnownAgent(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", "claude"}, {"hook", "codex", "--strict"}} {
		var out, errOut strings.Builder
		code := run(t.Context(), args, strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`), &out, &errOut)
		// A flag only an agent takes fails on its own, with exit 2 too.
		if code != 2 || out.Len() > 0 || errOut.Len() == 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
}
