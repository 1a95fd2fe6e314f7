package executor

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/secrets"
)

// NoRuleSecret says why a call whose arguments hold a secret is offered
// neither a session nor a project rule: the rule would be derived from
// those arguments, kept in the log and written to a file in plain text.
const NoRuleSecret = "no rule is offered: the arguments hold what looks like a secret, and a rule would keep it in plain text"

// maskDecision returns the decision as events and approval UIs show it:
// its reason and findings with every secret of the call hidden. A finding's
// text is a slice of an argument, and may cut a secret in two so that the
// patterns would no longer know the piece it keeps; it is masked as a span
// of the whole argument, so no byte of a secret shows. The reason and a
// finding's why are written about the call: a key name in them hides
// nothing but the call's own secrets (a "credentials: <path>" in a reason
// names a path), so they are masked with MaskDerived.
func maskDecision(d permission.Decision, args map[string]any, sec *secrets.Set) permission.Decision {
	if len(d.Findings) > 0 {
		fs := slices.Clone(d.Findings)
		// Pairs of raw and masked finding texts, for the reason, which
		// quotes the first finding's text.
		var texts []string
		for i := range fs {
			f := &fs[i]
			raw := f.Text
			if v, ok := args[f.Arg].(string); ok && f.Span.Start >= 0 && f.Span.Start <= f.Span.End && f.Span.End <= len(v) && v[f.Span.Start:f.Span.End] == raw {
				f.Text = sec.MaskSpan(v, f.Span.Start, f.Span.End)
			} else {
				f.Text = sec.Mask(raw)
			}
			f.Why = sec.MaskDerived(f.Why)
			if f.Text != raw && raw != "" {
				texts = append(texts, raw, f.Text)
			}
		}
		d.Findings = fs
		if len(texts) > 0 {
			d.Reason = strings.NewReplacer(texts...).Replace(d.Reason)
		}
	}
	d.Reason = sec.MaskDerived(d.Reason)
	return d
}

// ruleHoldsSecret reports whether a proposed rule would keep a secret the
// patterns find in any of its fields, though the arguments showed none: a
// shell word the parser joined from quoted pieces (sk-proj-"…"), say.
func ruleHoldsSecret(r permission.Rule) bool {
	raw, err := json.Marshal(r)
	if err != nil {
		return true
	}
	return secrets.Holds(raw)
}

// proposals asks the session's Rules which rules the session and project
// answers would make: never for a destructive call, never for a call whose
// arguments hold a secret (holds: one the patterns find or one the runner
// knows), and never a rule that would hold one. noRule
// says why none is offered, when a person should be told.
func (x *Executor) proposals(s *Session, info permission.ToolInfo, args map[string]any, d permission.Decision, holds bool) proposal {
	var p proposal
	if s.Rules == nil || riskOf(d) >= risk.Destructive {
		return p
	}
	if holds {
		p.noRule = NoRuleSecret
		return p
	}
	if r, ok := s.Rules.SessionRuleFor(info, args); ok {
		if ruleHoldsSecret(r) {
			p.noRule = NoRuleSecret
		} else {
			p.session = &r
		}
	}
	if r, ok := s.Rules.ProjectRuleFor(info, args); ok {
		if ruleHoldsSecret(r) {
			p.noRule = NoRuleSecret
		} else {
			p.project = &r
		}
	}
	if p.noRule != "" {
		p.session, p.project = nil, nil
	}
	return p
}
