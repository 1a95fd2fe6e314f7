package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
)

func TestArtifactCat(t *testing.T) {
	dir := t.TempDir()
	s, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	d, err := s.Put([]byte("PASS  packages/storage\nok\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", d)
	if err != nil || out != "PASS  packages/storage\nok\n" {
		t.Fatalf("artifact cat = %q, %v", out, err)
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", "sha256:"+strings.Repeat("0", 64)); exitCode(err) != 1 {
		t.Fatalf("missing artifact: %v, want exit 1", err)
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", "nope"); err == nil || !strings.Contains(err.Error(), "not an artifact digest") {
		t.Fatalf("bad digest: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "none")
	runCLI(t, "--data-dir", empty, "artifact", "cat", d)
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatal("artifact cat created the data dir")
	}
}

func TestArtifactCatDigestForms(t *testing.T) {
	dir := t.TempDir()
	s, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	d, err := s.Put([]byte("whole\n"))
	if err != nil {
		t.Fatal(err)
	}
	hex := strings.TrimPrefix(d, "sha256:")
	for _, form := range []string{d, hex, strings.ToUpper(hex), "SHA256:" + hex} {
		out, errOut, err := runCLI(t, "--data-dir", dir, "artifact", "cat", form)
		if err != nil || out != "whole\n" || errOut != "" {
			t.Errorf("artifact cat %s = %q, stderr %q, %v", form, out, errOut, err)
		}
	}
	for form, says := range map[string]string{
		hex[:40]:              "no recorded artifact starts with sha256:" + hex[:40],
		hex[:3]:               "too short a prefix",
		"sha1:" + hex:         `not "sha1"`,
		"sha256:" + hex + "z": `"z" is not a hex digit`,
	} {
		if _, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", form); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("artifact cat %s: %v, want an error saying %s", form, err, says)
		}
	}
}

// truncatedRun runs one turn whose shell call prints 100 bytes, with the
// output cap given by extra arguments or the environment, and returns the
// tool.completed event.
func truncatedRun(t *testing.T, data string, extra ...string) event.ToolCompletedPayload {
	t.Helper()
	cwd := t.TempDir()
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"printing","toolCalls":[{"id":"t1","name":"shell","args":{"command":"printf '%0100d' 0"}}]}
{"text":"done"}
`), 0o644)
	args := append([]string{"--data-dir", data, "run", "--model", "script:" + script, "--cwd", cwd, "--json"}, extra...)
	out, errOut, err := runWithInput(t, "allow_once\n", append(args, "print")...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		if e.Type == event.ToolCompleted {
			var p event.ToolCompletedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no tool.completed in\n%s", out)
	return event.ToolCompletedPayload{}
}

func TestOutputCapIsSaidInTheEventAndByArtifactCat(t *testing.T) {
	data := t.TempDir()
	p := truncatedRun(t, data, "--max-output-bytes", "40B")
	if p.StdoutBytes != 100 || p.Truncated == nil || *p.Truncated != (event.StreamBytes{Stdout: 60}) {
		t.Fatalf("tool.completed %+v, truncated %+v: want 100 bytes printed, 60 dropped", p, p.Truncated)
	}
	if len(p.Artifacts) != 1 || p.Artifacts[0].Bytes != 40 || !p.Artifacts[0].Truncated {
		t.Fatalf("artifacts %+v", p.Artifacts)
	}
	out, errOut, err := runCLI(t, "--data-dir", data, "artifact", "cat", strings.TrimPrefix(p.Artifacts[0].Digest, "sha256:"))
	if err != nil || out != strings.Repeat("0", 40) {
		t.Fatalf("artifact cat = %q, %v", out, err)
	}
	if !strings.Contains(errOut, "first 40 bytes of the stdout of tool call t1") || !strings.Contains(errOut, "which printed 100; 60 bytes were dropped") {
		t.Fatalf("artifact cat's stderr does not say what was dropped: %q", errOut)
	}
}

func TestOutputCapFromTheEnvironment(t *testing.T) {
	t.Setenv("CUSTOM_AGENT_MAX_OUTPUT_BYTES", "64")
	data := t.TempDir()
	if p := truncatedRun(t, data); p.Truncated == nil || p.Truncated.Stdout != 36 {
		t.Fatalf("with the variable at 64: truncated %+v", p.Truncated)
	}
	// The flag wins over the variable; under the cap nothing is cut, and
	// artifact cat says nothing on stderr.
	p := truncatedRun(t, data, "--max-output-bytes", "1KiB")
	if p.Truncated != nil || len(p.Artifacts) != 1 || p.Artifacts[0].Truncated || p.Artifacts[0].Bytes != 100 {
		t.Fatalf("with --max-output-bytes 1KiB: %+v, truncated %+v", p.Artifacts, p.Truncated)
	}
	if out, errOut, err := runCLI(t, "--data-dir", data, "artifact", "cat", p.Artifacts[0].Digest); err != nil || len(out) != 100 || errOut != "" {
		t.Fatalf("artifact cat = %d bytes, stderr %q, %v", len(out), errOut, err)
	}
	t.Setenv("CUSTOM_AGENT_MAX_OUTPUT_BYTES", "lots")
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"done"}`+"\n"), 0o644)
	if _, _, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", t.TempDir(), "x"); err == nil || !strings.Contains(err.Error(), "CUSTOM_AGENT_MAX_OUTPUT_BYTES") {
		t.Fatalf("run with CUSTOM_AGENT_MAX_OUTPUT_BYTES=lots: %v", err)
	}
}

func TestMaxOutputBytesFlagRefusesNonsense(t *testing.T) {
	for _, v := range []string{"0", "-1", "2 parsecs", "1.5GiB"} {
		if _, _, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--max-output-bytes", v, "x"); err == nil || !strings.Contains(err.Error(), "max-output-bytes") {
			t.Errorf("--max-output-bytes %q: %v", v, err)
		}
	}
}

// TestArtifactCatOfAnOutputInItsEvent: a short output the event holds
// whole is named inEvent, shown so by log, and printed by artifact cat from
// the log, with no copy in the artifact store.
func TestArtifactCatOfAnOutputInItsEvent(t *testing.T) {
	data := t.TempDir()
	p := truncatedRun(t, data)
	if len(p.Artifacts) != 1 || !p.Artifacts[0].InEvent || p.Artifacts[0].Bytes != 100 {
		t.Fatalf("artifacts %+v, want stdout's 100 bytes kept in the event", p.Artifacts)
	}
	digest := p.Artifacts[0].Digest
	if _, err := os.Stat(filepath.Join(data, "artifacts", "sha256", "small.pack")); !os.IsNotExist(err) {
		t.Fatalf("the artifact store got a copy (pack: %v)", err)
	}
	out, _, err := runCLI(t, "--data-dir", data, "artifact", "cat", digest)
	if err != nil || out != strings.Repeat("0", 100) {
		t.Fatalf("artifact cat = %q, %v", out, err)
	}
	logOut, _, err := runCLI(t, "--data-dir", data, "log", "last")
	if err != nil || !strings.Contains(logOut, "artifact stdout "+digest+" (100B, whole in this event)") {
		t.Fatalf("log does not say the output is in its event (%v):\n%s", err, logOut)
	}
}

// TestArtifactCatPrefix: a prefix names the one recorded artifact that
// starts with it, as git takes a commit's.
func TestArtifactCatPrefix(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"printf 'hello prefix\\n'"}}]}
{"text":"done"}
`), 0o644)
	if _, errOut, err := runWithInput(t, "allow_once\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "go"); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	out, _, err := runCLI(t, "--data-dir", data, "log", "last", "--json")
	if err != nil {
		t.Fatal(err)
	}
	digest := ""
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == event.ToolCompleted {
			var p event.ToolCompletedPayload
			json.Unmarshal(e.Payload, &p)
			for _, a := range p.Artifacts {
				if a.Name == "stdout" {
					digest = a.Digest
				}
			}
		}
	}
	if digest == "" {
		t.Fatalf("no stdout artifact in:\n%s", out)
	}
	hex := strings.TrimPrefix(digest, "sha256:")
	for _, form := range []string{hex[:8], "sha256:" + hex[:12], strings.ToUpper(hex[:6])} {
		got, errOut, err := runCLI(t, "--data-dir", data, "artifact", "cat", form)
		if err != nil || got != "hello prefix\n" {
			t.Errorf("artifact cat %s = %q, %v (%s)", form, got, err, errOut)
		}
	}
}
