package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// runWithInput runs the CLI with stdin set to input.
func runWithInput(t *testing.T, input string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut strings.Builder
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(input))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

func TestRunJSONWithScriptAndStdinAnswers(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cwd, "dist"), 0o755)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"cleaning","toolCalls":[{"id":"t1","name":"shell","args":{"command":"rm -rf dist"}}]}
{"text":"done"}
`), 0o644)
	out, errOut, err := runWithInput(t, "allow_once\nconfirm\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "clean dist")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		types = append(types, string(e.Type))
	}
	want := "session.started turn.started user.message policy.snapshot context.built model.delta model.tool_call_requested permission.requested permission.resolved tool.started tool.completed context.built model.delta turn.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(cwd, "dist")); !os.IsNotExist(err) {
		t.Fatal("dist was not removed after allow_once + confirm")
	}
	if !strings.Contains(errOut, "session ") || !strings.Contains(errOut, "confirm") {
		t.Fatalf("stderr lacks the prompt or the session id:\n%s", errOut)
	}
}

func TestRunDestructiveWithoutConfirmIsDenied(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cwd, "dist"), 0o755)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"rm -rf dist"}}]}
{"text":"ok, not deleting"}
`), 0o644)
	out, _, err := runWithInput(t, "allow_once\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "clean")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "dist")); err != nil {
		t.Fatal("dist was removed without a confirmation")
	}
	if !strings.Contains(out, "DENIED") || !strings.Contains(out, "ok, not deleting") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestRunWithoutModelSaysWhatToSet(t *testing.T) {
	t.Setenv("CUSTOM_AGENT_MODEL", "")
	_, _, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "hello")
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "script:FILE") {
		t.Fatalf("err = %v", err)
	}
}

func TestDemo(t *testing.T) {
	testenv.NeedProgram(t, "go")
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "demo", "--yes")
	if err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"--- PASS: TestAdd", "permission.resolved", "auto    tc_1 allow", "hash chain intact"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
