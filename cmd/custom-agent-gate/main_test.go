package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/support/buildinfo"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}, {"--data-dir", "/x", "version"}} {
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

// TestHelp: each command's help names its flags, from the definitions
// custom-agent's commands use too, and exits 0.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{}, []string{"Usage:\n  custom-agent-gate [command]", "--version", "--data-dir string"}},
		{[]string{"--help"}, []string{"custom-agent-gate check …"}},
		{[]string{"check", "--help"}, []string{"Usage:\n  custom-agent-gate check [flags]", "--policy stringArray", "--mode string", `(default "{}")`, "custom-agent-gate check --jsonl", "Global Flags:\n      --data-dir string"}},
		{[]string{"help", "check"}, []string{"--no-builtin-rules"}},
		{[]string{"hook", "-h"}, []string{"claude-code  Answer one claude-code hook event", "gemini-cli"}},
		{[]string{"hook", "gemini-cli", "--help"}, []string{"--strict", "--deadline duration", "(default 5s)"}},
		{[]string{"--data-dir", "/x", "hook", "claude-code", "-h"}, []string{"--no-record"}},
	} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), tc.args, strings.NewReader(""), &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Errorf("%v: exit %d\n%s", tc.args, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: help without %q:\n%s", tc.args, w, out.String())
			}
		}
	}
	var out bytes.Buffer
	if run(t.Context(), []string{"hook", "claude-code", "-h"}, strings.NewReader(""), &out, io.Discard); strings.Contains(out.String(), "--strict") {
		t.Errorf("claude-code's help offers gemini-cli's --strict:\n%s", out.String())
	}
}

// TestBadCommandLines: the errors name what is wrong, exit 2, as
// custom-agent's (cmd/custom-agent's gate parity test runs both).
func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--frobnicate"}, "custom-agent: unknown flag: --frobnicate\n"},
		{[]string{"check", "--tool"}, "custom-agent: flag needs an argument: --tool\n"},
		{[]string{"--frobnicate", "check"}, "custom-agent: unknown flag: --frobnicate\n"},
		{[]string{"hook", "claude-code", "--strict"}, "custom-agent: unknown flag: --strict\n"},
		{[]string{"hook", "gemini-cli", "--deadline", "soon"}, `custom-agent: invalid argument "soon" for "--deadline" flag: time: invalid duration "soon"` + "\n"},
		{[]string{"hook", "claude-code", "extra"}, `custom-agent: unknown command "extra" for "custom-agent-gate hook claude-code"` + "\n"},
		{[]string{"version", "extra"}, `custom-agent: unknown command "extra" for "custom-agent-gate version"` + "\n"},
	} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), tc.args, strings.NewReader(""), &out, &errOut); code != 2 || out.Len() > 0 || errOut.String() != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out.String(), errOut.String(), tc.want)
		}
	}
}
