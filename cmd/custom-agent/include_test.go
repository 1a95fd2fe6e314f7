package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/mcp/mcptest"

	"github.com/custom-agent/custom-agent/contextbuild"
	"github.com/custom-agent/custom-agent/event"
)

// mcpConfig writes a user configuration with the filesystem server (over
// proj and HOME) and the everything server.
func mcpConfig(t *testing.T, configHome, proj string) {
	t.Helper()
	srv := mcptest.Dir(t)
	cfg := map[string]any{"version": 1, "mcpServers": map[string]any{
		"filesystem": map[string]any{"command": "node", "args": []string{mcptest.Script(srv, "server-filesystem"), proj, os.Getenv("HOME")}},
		"everything": map[string]any{"command": "node", "args": []string{mcptest.Script(srv, "server-everything"), "stdio"}},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(configHome, "custom-agent", "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunIncludesMCPResources (issue 12, resources): --include and
// @server:uri read a resource through the gate (permission.resolved before
// it is read) and put it in the model's next request; a key file's
// file:// URI through the filesystem server is denied as credential before
// the server is asked; the model cannot call the resource tool.
func TestRunIncludesMCPResources(t *testing.T) {
	configHome, proj := configDirs(t, "", "")
	mcpConfig(t, configHome, proj)
	key := filepath.Join(os.Getenv("HOME"), ".ssh", "id_rsa")
	script := writeScript(t, `{"toolCalls": [{"id": "sneak", "name": "mcp__everything__resource", "args": {"uri": "demo://resource/dynamic/text/9"}}]}`+"\n"+`{"text": "done"}`)
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--cwd", proj, "--json",
		"--include", "mcp://everything/demo://resource/dynamic/text/3", "--include", "mcp://filesystem/file://"+key,
		"summarise @everything:demo://resource/dynamic/text/5.")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	evs := jsonEvents(t, out)
	refs := []string{"mcp://everything/demo://resource/dynamic/text/3", "mcp://filesystem/file://" + key, "mcp://everything/demo://resource/dynamic/text/5"}
	var firstBuilt = -1
	seqOf := map[string]uint64{}
	for i, e := range evs {
		p, _ := e.Decode()
		switch p := p.(type) {
		case *event.UserMessagePayload:
			if strings.Join(p.Includes, " ") != strings.Join(refs, " ") {
				t.Errorf("user.message includes %v; want %v", p.Includes, refs)
			}
		case *event.ContextBuiltPayload:
			if firstBuilt < 0 {
				firstBuilt = i
				if p.ToolResultsIncluded != 2 {
					t.Errorf("the first context.built includes %d results; want the 2 resources read", p.ToolResultsIncluded)
				}
			}
		case *event.PermissionResolvedPayload:
			seqOf["resolved "+p.ToolCallID] = e.Seq
		case *event.ToolStartedPayload:
			seqOf["started "+p.ToolCallID] = e.Seq
		}
	}
	for _, n := range []string{"1", "3"} {
		c := byCall(evs, "turn-1_include_"+n)
		if r := c[event.PermissionResolved]; r == nil || r["decision"] != "allow" || r["riskAtDecision"] != "read" {
			t.Errorf("include %s: %v; want allowed at read", n, c)
		}
		if seqOf["resolved turn-1_include_"+n] == 0 || seqOf["resolved turn-1_include_"+n] > seqOf["started turn-1_include_"+n] {
			t.Errorf("include %s was read before it was decided: %v", n, seqOf)
		}
	}
	if s, _ := byCall(evs, "turn-1_include_1")[event.ToolCompleted]["stdoutPreview"].(string); !strings.Contains(s, "Resource 3: This is a plaintext resource") {
		t.Errorf("include 1 read %q", s)
	}
	k := byCall(evs, "turn-1_include_2")
	if r := k[event.PermissionResolved]; r == nil || r["decision"] != "deny" || r["riskAtDecision"] != "credential" || k[event.ToolStarted] != nil {
		t.Errorf("include of %s through the filesystem server: %v; want denied as credential before the server is asked", key, k)
	}
	if f := byCall(evs, "sneak")[event.ToolFailed]; f == nil || f["stage"] != "resolve" {
		t.Errorf("the model called the resource tool: %v; want an unknown tool", byCall(evs, "sneak"))
	}
	if firstBuilt < 0 {
		t.Fatal("no context.built")
	}
	// The model's next request is built from the log up to there.
	c, err := contextbuild.Build(evs[:firstBuilt])
	if err != nil {
		t.Fatal(err)
	}
	msg := c.Messages[0].Content
	// Each included text is between the delimiters of a tool's output
	// (contextbuild.Wrap).
	for _, want := range []string{"summarise @everything", "[included resource " + refs[0] + "]\n<tool-output call=", "\">\nResource 3:",
		"[included resource " + refs[2] + "]\n<tool-output call=", "\">\nResource 5:",
		"[included resource " + refs[1] + " could not be read: Permission denied"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the model's request lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Resource 9") {
		t.Error("a resource nobody included reached the model")
	}

	// An include of a server that is not configured stops the run.
	_, _, err = runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--cwd", proj, "--include", "mcp://nope/x://y", "go")
	if err == nil || !strings.Contains(err.Error(), `no MCP server "nope" is configured`) {
		t.Errorf("an include of an unknown server: %v", err)
	}
}

// TestRunDefinitionChangedEventOnce: a pinned tool offered with another
// definition is recorded as tool.definition_changed once, before the ask,
// however often it is called.
func TestRunDefinitionChangedEventOnce(t *testing.T) {
	configHome, proj := configDirs(t, "", "")
	mcpConfig(t, configHome, proj)
	data := t.TempDir()
	old := "sha256:" + strings.Repeat("0", 64)
	pb, _ := json.Marshal(map[string]any{"tools": map[string]string{"mcp__everything__echo": old}})
	if err := os.WriteFile(filepath.Join(data, "mcp-pins.json"), pb, 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"toolCalls": [{"id": "e1", "name": "mcp__everything__echo", "args": {"message": "a"}}, {"id": "e2", "name": "mcp__everything__echo", "args": {"message": "b"}}]}`+"\n"+
		`{"toolCalls": [{"id": "e3", "name": "mcp__everything__echo", "args": {"message": "c"}}]}`+"\n"+`{"text": "ok"}`)
	out, errOut, err := runWithInput(t, "deny\ndeny\ndeny\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", proj, "--json", "echo")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	evs := jsonEvents(t, out)
	var changed []map[string]any
	var changedSeq, askedSeq uint64
	for _, e := range evs {
		var p map[string]any
		_ = json.Unmarshal(e.Payload, &p)
		switch {
		case e.Type == event.ToolDefinitionChanged:
			changed = append(changed, p)
			changedSeq = e.Seq
		case e.Type == event.PermissionRequested && p["toolCallId"] == "e1":
			askedSeq = e.Seq
			if !strings.Contains(p["reason"].(string), "the tool's definition changed since it was approved") {
				t.Errorf("e1 asked for %q", p["reason"])
			}
		}
	}
	if len(changed) != 1 {
		t.Fatalf("%d tool.definition_changed events; want 1: %v", len(changed), changed)
	}
	c := changed[0]
	if c["server"] != "everything" || c["tool"] != "echo" || c["fullName"] != "mcp__everything__echo" || c["oldHash"] != old ||
		!strings.HasPrefix(c["newHash"].(string), "sha256:") || c["newHash"] == old || c["toolCallId"] != "e1" {
		t.Errorf("tool.definition_changed %v", c)
	}
	if askedSeq == 0 || changedSeq > askedSeq {
		t.Errorf("the change (seq %d) is not recorded before the ask (seq %d)", changedSeq, askedSeq)
	}
	for _, id := range []string{"e2", "e3"} {
		if byCall(evs, id)[event.PermissionRequested] == nil {
			t.Errorf("%s was not asked again", id)
		}
	}
}
