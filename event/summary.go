package event

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Summary returns a one-line, human-readable description of the event for
// timelines. It never fails: an undecodable payload is summarised as such.
func (e Event) Summary() string {
	p, err := e.Decode()
	if err != nil {
		return "(undecodable: " + err.Error() + ")"
	}
	switch p := p.(type) {
	case *SessionStartedPayload:
		if p.SessionSource != "" {
			return fmt.Sprintf("cwd=%s mode=%s source=%s", p.Cwd, p.Mode, p.SessionSource)
		}
		return fmt.Sprintf("cwd=%s mode=%s model=%s", p.Cwd, p.Mode, p.Model)
	case *TurnStartedPayload:
		return ""
	case *UserMessagePayload:
		if len(p.Includes) > 0 {
			return quote(p.Content) + " including " + clip(strings.Join(p.Includes, " "))
		}
		return quote(p.Content)
	case *ContextBuiltPayload:
		return fmt.Sprintf("%d messages, %d tool results", p.MessageCount, p.ToolResultsIncluded)
	case *ModelDeltaPayload:
		return quote(p.Text)
	case *ModelToolCallRequestedPayload:
		return fmt.Sprintf("%s %s %s", p.ToolCallID, p.Tool, clip(string(p.Args)))
	case *PermissionRequestedPayload:
		return fmt.Sprintf("%s %s risk=%s ask: %s", p.ToolCallID, p.Tool, p.RiskAtDecision, p.Reason)
	case *PermissionResolvedPayload:
		return fmt.Sprintf("%s %s risk=%s from=%s: %s", p.ToolCallID, p.Decision, p.RiskAtDecision, p.SourcedFrom, p.Reason)
	case *ToolStartedPayload:
		s := fmt.Sprintf("%s %s %s", p.ToolCallID, p.Tool, clip(string(p.Args)))
		if p.Sandbox != nil {
			s += " · " + p.Sandbox.Words()
		}
		return s
	case *ToolCompletedPayload:
		exit := "-"
		if p.ExitCode != nil {
			exit = fmt.Sprint(*p.ExitCode)
		}
		s := fmt.Sprintf("%s exit=%s stdout=%dB stderr=%dB %dms", p.ToolCallID, exit, p.StdoutBytes, p.StderrBytes, p.DurationMs)
		if t := p.Truncated; t != nil {
			s += fmt.Sprintf(" not-stored=stdout:%dB,stderr:%dB", t.Stdout, t.Stderr)
		}
		return s + injectionWords(p.Injection)
	case *ToolFailedPayload:
		return fmt.Sprintf("%s stage=%s: %s", p.ToolCallID, p.Stage, clip(p.Error)) + injectionWords(p.Injection)
	case *TurnCompletedPayload:
		if p.Error != "" {
			return p.StopReason + ": " + clip(p.Error)
		}
		return p.StopReason
	case *PolicyChangedPayload:
		return fmt.Sprintf("%s %s %s", p.Level, p.Op, clip(string(p.Rule)))
	case *ToolDefinitionChangedPayload:
		return fmt.Sprintf("%s definition changed: %s → %s", p.FullName, shortHash(p.OldHash), shortHash(p.NewHash))
	case *ModeChangedPayload:
		return fmt.Sprintf("mode %s → %s by %s", p.From, p.To, p.By)
	case *SkillActivatedPayload:
		tools := strings.Join(p.AllowedTools, ", ")
		if tools == "" {
			tools = "no tool"
		}
		return fmt.Sprintf("%s skill %s (%s) allows %s", p.ToolCallID, p.Name, p.Source, clip(tools))
	case *SkillEndedPayload:
		return fmt.Sprintf("skill %s ended: %s", p.Name, clip(p.Reason))
	case *PolicySnapshotPayload:
		s := fmt.Sprintf("%d rules", len(p.Rules))
		if p.Builtin != nil {
			s += fmt.Sprintf(" and %d built-in", p.Builtin.Count)
		}
		if len(p.Ignored) > 0 {
			s += fmt.Sprintf(", %d untrusted project allow rules ignored", len(p.Ignored))
		}
		return s + " " + shortHash(p.Digest)
	case *ModelReplyFlaggedPayload:
		return "the model's reply holds text the scanner flags: injection=" + strings.Join(p.Classes, ",")
	}
	return ""
}

const summaryMax = 100

func quote(s string) string {
	return strconv.Quote(clip(s))
}

// clip shortens s to one line of at most summaryMax runes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= summaryMax {
		return s
	}
	r := []rune(s)
	return string(r[:summaryMax-1]) + "…"
}

// shortHash is a definition hash cut to its first 12 hex digits.
func shortHash(h string) string {
	algo, hex, ok := strings.Cut(h, ":")
	if !ok {
		algo, hex = "", h
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if algo == "" {
		return hex
	}
	return algo + ":" + hex
}

// injectionWords names what the prompt-injection scanner found, for a
// summary line ("" when nothing).
func injectionWords(in *Injection) string {
	if in == nil {
		return ""
	}
	return " injection=" + strings.Join(in.Classes, ",")
}
