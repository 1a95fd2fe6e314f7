package permission

import "github.com/custom-agent/custom-agent/permission/risk"

// Verdict is allow, ask or deny. The zero value is unset, and every caller
// must treat an unset verdict as deny.
type Verdict string

const (
	Unset Verdict = ""
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// strictness orders verdicts for combining rules: deny beats ask beats allow.
func (v Verdict) strictness() int {
	switch v {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// Valid reports whether v is allow, ask or deny.
func (v Verdict) Valid() bool { return v.strictness() > 0 }

// Source says which step of the decision tree decided.
type Source string

const (
	// FromDefault is the default table of spec §4.
	FromDefault Source = "default"
	// FromOverride is a policy rule (spec §3 step 3).
	FromOverride Source = "override"
	// FromPrior is an identical call the user approved earlier in the
	// session (spec §3 step 5).
	FromPrior Source = "prior"
	// FromMode is the session's mode or the tool's allowed modes.
	FromMode Source = "mode"
	// FromSkill is the active skill's allowed tools.
	FromSkill Source = "skill"
	// FromTaint is the taint rule: a call that would have been allowed
	// after a flagged tool result in the same turn is asked instead.
	FromTaint Source = "taint"
)

// Decision is the engine's answer for one call. The zero Decision is unset
// and means deny to every caller; use Allowed rather than comparing fields.
type Decision struct {
	Decision Verdict `json:"decision"`
	// Reason is one or two sentences a person understands: what was judged,
	// and which rule, finding or default decided.
	Reason string `json:"reason"`
	// RiskAtDecision is the risk of the call after its arguments were judged.
	RiskAtDecision risk.Level `json:"riskAtDecision"`
	SourcedFrom    Source     `json:"sourcedFrom"`
	// Findings say which parts of the arguments raised the risk, highest
	// first.
	Findings []risk.Finding `json:"findings"`
	// Rule is the policy rule that decided, when SourcedFrom is override.
	Rule *RuleRef `json:"rule,omitempty"`
	// ReadOnly is set when the call, as the analyser understood it, only
	// reads: a call judged read, or a shell command every simple command
	// of which has a read-only form (shellrisk.ReadOnly) and that writes
	// nothing. The sandbox runs such a call read-only, so that whatever
	// the analyser missed in it cannot write either.
	ReadOnly bool `json:"-"`
}

// Allowed reports whether the call may run without asking anyone. It is
// true only for an explicit allow: unset, ask and deny are all false.
func (d Decision) Allowed() bool { return d.Decision == Allow }

// RuleRef names the policy rule behind a decision, for the audit trail.
type RuleRef struct {
	ID       string    `json:"id"`
	Level    RuleLevel `json:"level"`
	Source   string    `json:"source,omitempty"`
	Decision Verdict   `json:"decision"`
}
