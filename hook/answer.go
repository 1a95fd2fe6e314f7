package hook

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Answer is what the hook process writes and exits with.
type Answer struct {
	Stdout []byte
	Stderr []byte
	Code   int
	// Verdict and Reason are what was answered to a before event (a
	// Gemini CLI ask answered deny is deny; one deferred to Gemini CLI's
	// confirmation is ask), for the record.
	Verdict permission.Verdict
	Reason  string
}

// Options change how a verdict is answered.
type Options struct {
	// Strict answers Gemini CLI's ask as deny. Without it an ask at write
	// risk or below (r, the highest risk of the call and its findings:
	// no protected path, no network, no credential) of a tool Gemini CLI
	// confirms itself (write_file, replace) defers to Gemini CLI's own
	// confirmation; every other ask is denied. Gemini CLI's confirmation
	// offers "always allow", after which it asks no more, so only what a
	// person may safely allow for good is left to it.
	Strict bool
}

// ReasonPrefix begins every reason, so that the person and the model see
// who decided.
const ReasonPrefix = "custom-agent: "

// geminiConfirms are the tools Gemini CLI asks the person about before it
// runs them, in its default approval mode, and whose ask may be deferred
// to it (at write risk or below). Its shell, web_fetch and MCP tools are
// confirmed too, but their asks are at execute risk or above: denied.
var geminiConfirms = map[string]bool{
	"run_shell_command": true, "write_file": true, "replace": true, "web_fetch": true,
}

// Decide answers a before event: v is the engine's verdict for the call
// (Unset is deny), reason its reason, r the risk it was judged at (with
// its findings': see Options). A destructive call is never answered
// allow, whatever v says.
func Decide(in *Input, v permission.Verdict, reason string, r risk.Level, o Options) Answer {
	if !v.Valid() {
		v = permission.Deny
	}
	if v == permission.Allow && r >= risk.Destructive {
		v = permission.Ask
	}
	switch in.Agent {
	case ClaudeCode:
		return Answer{Stdout: encode(claudeOutput{HookSpecificOutput: claudeDecision{
			HookEventName: ClaudePreToolUse, PermissionDecision: string(v), PermissionDecisionReason: ReasonPrefix + reason,
		}}), Verdict: v, Reason: reason}
	default:
		if v == permission.Ask {
			_, mcp := mcpTool(in.ToolName)
			switch {
			case o.Strict:
				reason += " (asked; gemini-cli has no ask, and the hook runs with --strict, so it is denied)"
			case !geminiConfirms[in.ToolName] && !mcp:
				reason += " (asked; gemini-cli would run " + in.ToolName + " without asking, so it is denied)"
			case r > risk.Write:
				// Gemini CLI's confirmation offers "always allow", after
				// which it asks no more: what runs a program, sends data
				// away, touches a protected path or a credential, or
				// destroys, would not be asked every time.
				reason += " (asked at " + r.String() + " risk; gemini-cli's own confirmation can be answered \"always\", after which it asks no more, so only an ask at write risk or below is left to it; this one is denied)"
			default:
				return Answer{Stdout: encode(geminiOutput{SystemMessage: ReasonPrefix + "asks: " + reason}), Verdict: v, Reason: reason}
			}
			v = permission.Deny
		}
		return Answer{Stdout: encode(geminiOutput{Decision: string(v), Reason: ReasonPrefix + reason}), Verdict: v, Reason: reason}
	}
}

// Recorded answers an after event: nothing changes what the agent does.
func Recorded(a Agent) Answer {
	if a == GeminiCLI {
		return Answer{Stdout: []byte("{}\n")}
	}
	return Answer{}
}

// Fail answers an event that could not be judged (empty, truncated, too
// large, an unknown event, a policy that does not load): exit status 2
// with the reason on standard error, which both agents read as "block
// this call". It never allows.
func Fail(err error) Answer {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	return Answer{Stderr: []byte(ReasonPrefix + msg + " (the call is blocked)\n"), Code: 2}
}

type claudeOutput struct {
	HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
}

type claudeDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

type geminiOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("hook: encoding an answer: " + err.Error()) // only strings: cannot fail
	}
	return b.Bytes()
}
