package acp

import (
	"time"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
)

// Settings are a session's settings for its directory: what the
// configuration files of that directory say, under the command's flags.
// A zero field keeps the agent's Config.
type Settings struct {
	// Mode is the mode a new session starts in (a loaded one continues in
	// the mode it last ran in).
	Mode permission.Mode
	// Model is the session's model; when it is nil and ModelErr is set, the
	// session fails with ModelErr, which says what to set.
	Model    model.Gateway
	ModelErr error
	// ApprovalTimeout and MaxStored are the session's executor options.
	ApprovalTimeout time.Duration
	MaxStored       int64
	// Rules is the session's policy (it replaces Config.Rules).
	Rules session.Rules
	// Servers are the MCP servers the configuration files name; they start
	// with the editor's, and the editor's win on a name both use.
	Servers map[string]config.Server
	// Warnings are told to the person with the session's notices (keys of
	// an untrusted project that were ignored).
	Warnings []string
}

// setup is what session/new and session/load have checked and resolved.
type setup struct {
	dir      string
	rules    session.Rules
	model    model.Gateway
	mode     permission.Mode
	settings Settings
}
