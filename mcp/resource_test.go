package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/mcp"
	"github.com/custom-agent/custom-agent/mcp/mcptest"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

func TestParseIncludes(t *testing.T) {
	i, err := mcp.ParseInclude("mcp://filesystem/file:///home/u/.ssh/id_rsa")
	if err != nil || i.Server != "filesystem" || i.URI != "file:///home/u/.ssh/id_rsa" || i.Tool() != "mcp__filesystem__resource" {
		t.Fatalf("%+v %v", i, err)
	}
	args, err := i.Args()
	if err != nil || string(args) != `{"path":"/home/u/.ssh/id_rsa","uri":"file:///home/u/.ssh/id_rsa"}` {
		t.Fatalf("args %s %v", args, err)
	}
	if a, _ := (mcp.Include{Server: "e", URI: "demo://resource/dynamic/text/1"}).Args(); string(a) != `{"uri":"demo://resource/dynamic/text/1"}` {
		t.Errorf("a URI that is not a file has no path: %s", a)
	}
	for _, bad := range []string{"everything/x", "mcp://everything", "mcp:///x", "mcp://fs/file://evil.example/etc/passwd"} {
		if _, err := mcp.ParseInclude(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
	got, err := mcp.PromptIncludes("read @everything:demo://resource/dynamic/text/2, and mail @alice:home and@everything:no", []string{"everything", "filesystem"})
	if err != nil || len(got) != 1 || got[0] != (mcp.Include{Server: "everything", URI: "demo://resource/dynamic/text/2"}) {
		t.Fatalf("prompt includes: %+v %v", got, err)
	}
}

// A file:// resource is judged as a path: a key file is credential and
// denied, whatever the server.
func TestResourceOfKeyFileIsCredential(t *testing.T) {
	i, _ := mcp.ParseInclude("mcp://filesystem/file:///home/u/.ssh/id_rsa")
	raw, _ := i.Args()
	var args map[string]any
	_ = json.Unmarshal(raw, &args)
	info := mcp.ResourceInfo("filesystem")
	if info.Risk != risk.Read || info.Kind != permission.KindRead {
		t.Fatalf("resource tool: %+v", info)
	}
	d := permission.Engine{}.Check(permission.Request{Tool: info, Args: args, Cwd: "/home/u/proj", Home: "/home/u", Mode: permission.ModeDefault})
	if d.Decision != permission.Deny || d.RiskAtDecision != risk.Credential {
		t.Fatalf("include of a key file: %s at %s (%s); want deny at credential", d.Decision, d.RiskAtDecision, d.Reason)
	}
	// Outside the working directory it is asked, as read_file would be.
	args = map[string]any{"uri": "file:///srv/data/report.txt", "path": "/srv/data/report.txt"}
	if d := (permission.Engine{}).Check(permission.Request{Tool: info, Args: args, Cwd: "/home/u/proj", Home: "/home/u"}); d.Decision != permission.Ask {
		t.Errorf("a file outside the working directory: %s at %s (%s); want ask", d.Decision, d.RiskAtDecision, d.Reason)
	}
	args = map[string]any{"uri": "demo://resource/dynamic/text/1"}
	if d := (permission.Engine{}).Check(permission.Request{Tool: info, Args: args, Cwd: "/home/u/proj", Home: "/home/u"}); d.RiskAtDecision != risk.Read {
		t.Fatalf("a resource that is not a file: %s at %s; want read", d.Decision, d.RiskAtDecision)
	}
}

func TestReadResourceFromEverything(t *testing.T) {
	srv := mcptest.Dir(t)
	m := start(t, map[string]config.Server{"everything": node(t, srv, "server-everything", "stdio")}, nil, nil)
	r := m.Resources()
	if _, err := r.Resolve("mcp__everything__resource"); err != nil {
		t.Fatal(err)
	}
	for _, info := range r.Infos() {
		if !strings.HasSuffix(info.Name, "__resource") {
			t.Errorf("the resource router holds %s", info.Name)
		}
	}
	tl, _ := r.Resolve("mcp__everything__resource")
	for _, mt := range m.Tools() {
		if mt.Info().Name == "mcp__everything__resource" {
			t.Fatal("the resource tool is among the tools offered to the model")
		}
	}
	var out, errOut strings.Builder
	if _, err := tl.Run(t.Context(), tool.Call{ID: "i1", Args: map[string]any{"uri": "demo://resource/dynamic/text/7"}}, tool.Output{Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Resource 7: This is a plaintext resource") {
		t.Fatalf("resource text: %q", out.String())
	}
	// A path that is not the one the URI names is refused.
	if _, err := tl.Run(t.Context(), tool.Call{ID: "i2", Args: map[string]any{"uri": "file:///tmp/a", "path": "/tmp/b"}}, tool.Output{Stdout: &out, Stderr: &errOut}); err == nil {
		t.Fatal("a path other than the URI's was accepted")
	}
	if _, err := tl.Run(t.Context(), tool.Call{ID: "i3", Args: map[string]any{"uri": "demo://resource/nothing/here"}}, tool.Output{Stdout: &out, Stderr: &errOut}); err == nil {
		t.Fatal("an unknown resource read without error")
	}
}
