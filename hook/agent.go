package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
)

// Agent names the agent whose hook is answered.
type Agent string

const (
	ClaudeCode Agent = "claude-code"
	GeminiCLI  Agent = "gemini-cli"
)

// Agents are the agents this package speaks to, in the order help lists them.
var Agents = []Agent{ClaudeCode, GeminiCLI}

// ParseAgent checks an agent name from the command line.
func ParseAgent(s string) (Agent, error) {
	switch a := Agent(s); a {
	case ClaudeCode, GeminiCLI:
		return a, nil
	}
	return "", fmt.Errorf("unknown agent %q (want claude-code or gemini-cli)", s)
}

// Stage says whether an event comes before the tool runs or after.
type Stage int

const (
	// Before: PreToolUse, BeforeTool. The answer decides the call.
	Before Stage = iota + 1
	// After: PostToolUse, AfterTool. The outcome is recorded; the answer
	// changes nothing.
	After
)

// Event names of each agent.
const (
	ClaudePreToolUse  = "PreToolUse"
	ClaudePostToolUse = "PostToolUse"
	GeminiBeforeTool  = "BeforeTool"
	GeminiAfterTool   = "AfterTool"
)

// StageOf returns the stage of the agent's event name; ok is false for an
// event this package does not answer.
func StageOf(a Agent, eventName string) (Stage, bool) {
	switch {
	case a == ClaudeCode && eventName == ClaudePreToolUse, a == GeminiCLI && eventName == GeminiBeforeTool:
		return Before, true
	case a == ClaudeCode && eventName == ClaudePostToolUse, a == GeminiCLI && eventName == GeminiAfterTool:
		return After, true
	}
	return 0, false
}

// EventNames returns the agent's before and after event names.
func (a Agent) EventNames() (before, after string) {
	if a == GeminiCLI {
		return GeminiBeforeTool, GeminiAfterTool
	}
	return ClaudePreToolUse, ClaudePostToolUse
}

// SessionID is the event log session a hook call of agent a in the agent's
// session agentID is recorded in: the agent's name and its id, so that no
// agent's id can name one of custom-agent's own sessions. An id that is
// empty, long, or holds other characters than letters, digits, '.', '_'
// and '-' is replaced by a digest of it.
func SessionID(a Agent, agentID string) string {
	if plainID(agentID) {
		return string(a) + "-" + agentID
	}
	sum := sha256.Sum256([]byte(agentID))
	return string(a) + "-x" + hex.EncodeToString(sum[:8])
}

func plainID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ToolCallID names the call in the log: Claude Code's tool_use_id when it
// is a plain id, else a digest of the session, the tool and its input, so
// that the after event of the same call gets the same id.
func ToolCallID(in *Input, canonicalInput []byte) string {
	if plainID(in.ToolUseID) {
		return in.ToolUseID
	}
	h := sha256.New()
	for _, s := range []string{string(in.Agent), in.SessionID, in.ToolName} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(canonicalInput)
	return "hook-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// ModeFor is the mode a call is judged in: the configuration's conf,
// unless the agent's permission_mode is one that custom-agent has too and
// it asks for no more than conf allows. Claude Code's plan and dontAsk
// tighten any mode; its acceptEdits applies over default only; every
// other mode (bypassPermissions among them) leaves conf.
func ModeFor(conf permission.Mode, agentMode string) permission.Mode {
	if conf == "" {
		conf = permission.ModeDefault
	}
	switch agentMode {
	case "plan":
		return permission.ModePlan
	case "dontAsk":
		if conf != permission.ModePlan {
			return permission.ModeDontAsk
		}
	case "acceptEdits":
		if conf == permission.ModeDefault {
			return permission.ModeAcceptEdits
		}
	}
	return conf
}

// JudgeCwd is the working directory paths are judged against: the event's
// cwd when it lies within the agent's project directory (or no project
// directory is known), else the project directory, so that a model that
// changed directory to / does not make every path "inside".
func JudgeCwd(eventCwd, projectDir string) string {
	if projectDir == "" || !filepath.IsAbs(projectDir) {
		return eventCwd
	}
	pd := filepath.Clean(projectDir)
	if eventCwd == pd || strings.HasPrefix(eventCwd, strings.TrimSuffix(pd, "/")+"/") {
		return eventCwd
	}
	return pd
}
