package permission

import "github.com/custom-agent/custom-agent/permission/risk"

// ReasonDefinitionChanged is the reason, in every decision about a tool
// whose definition changed since it was approved, that says why it is
// asked.
const ReasonDefinitionChanged = "the tool's definition changed since it was approved"

// definitionChanged decides a call of a tool whose definition is not the
// one approved (ToolInfo.Changed): a deny rule still denies and a
// credential call is still denied, but allow and ask rules and prior
// approvals, all made for the old definition, do not apply: the call is
// asked.
func definitionChanged(req *Request, j *judge, d Decision, m matched) Decision {
	c := req.Tool.Changed
	d.Findings = append(d.Findings, risk.Finding{Risk: j.level,
		Why: ReasonDefinitionChanged + " (approved " + short(c.Approved) + ", offered now " + short(c.Offered) + ")"})
	if r := m.rule; r != nil && r.Decision == Deny {
		d.Decision, d.SourcedFrom, d.Rule = Deny, FromOverride, r.ref()
		d.Reason = ruleName(r) + " denies this call" + riskClause(j) + "."
		return d
	}
	d.SourcedFrom = FromDefault
	if j.level == risk.Credential {
		d.Decision = Deny
		d.Reason = subject(req, j) + "; credential calls are denied unless a policy rule that names them allows them, and " +
			ReasonDefinitionChanged + "."
		return d
	}
	d.Decision = Ask
	d.Reason = req.Tool.Name + ": " + ReasonDefinitionChanged + " (approved " + short(c.Approved) + ", offered now " + short(c.Offered) +
		"), so its rules and earlier approvals do not apply; judged " + j.level.String() + "."
	return d
}

// short returns the first 12 hex digits of a "sha256:…" hash.
func short(h string) string {
	const n = len("sha256:") + 12
	if len(h) > n {
		return h[:n]
	}
	return h
}
