package acp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval/acp"
	"github.com/custom-agent/custom-agent/permission"
)

// TestSettingsPerSession: the settings of the session's directory give its
// mode, its model and notices; settings that do not load fail the session
// with their error, and the agent keeps serving.
func TestSettingsPerSession(t *testing.T) {
	e := newEnv(t)
	other := filepath.Join(e.home, "configured.jsonl")
	if err := os.WriteFile(other, []byte(`{"text":"From the configured model."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	e.settings = func(cwd string) (acp.Settings, error) {
		dirs = append(dirs, cwd)
		if len(dirs) == 1 {
			return acp.Settings{}, errors.New("/p/.custom-agent/config.json:1:15: unknown key \"nope\"")
		}
		m, err := app.Model("script:"+other, func(string) string { return "" })
		if err != nil {
			return acp.Settings{}, err
		}
		return acp.Settings{Mode: permission.ModePlan, Model: m, Warnings: []string{"ignored mcpServers.evil: the project is not trusted"}}, nil
	}
	a := e.start(e.script(`{"text":"From the agent's model."}`))
	c := e.connect(a)
	c.init(t)
	_, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "config.json:1:15") {
		t.Fatalf("session/new with settings that do not load: %v, want their error", err)
	}
	r, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Modes == nil || r.Modes.CurrentModeId != "plan" {
		t.Errorf("modes %+v, want the settings' plan", r.Modes)
	}
	c.prompt(t, r.SessionId, "hello")
	c.tr.mu.Lock()
	all := strings.Join(c.tr.toClient, "\n")
	c.tr.mu.Unlock()
	if !strings.Contains(all, "From the configured model.") || strings.Contains(all, "From the agent's model.") {
		t.Errorf("the turn did not use the settings' model:\n%s", all)
	}
	if !strings.Contains(all, "custom-agent: ignored mcpServers.evil") {
		t.Errorf("the settings' warning is not told to the person:\n%s", all)
	}
	if len(dirs) != 2 || dirs[1] != e.cwd {
		t.Errorf("settings read for %v, want the session's directory each time", dirs)
	}
}
