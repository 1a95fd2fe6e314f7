package permission

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Engine decides tool calls. The zero Engine is ready to use; it holds no
// state and is safe for concurrent use.
type Engine struct{}

// Check decides one call. It is pure: the Decision depends on req alone,
// and Check never blocks, panics on any input, or keeps anything of req.
// A Decision is never unset.
//
// The steps, in order (spec §3, with what it leaves open settled here):
//  1. Risk: the tool's base risk, raised by its arguments (shell commands,
//     paths in both their forms, patch targets, URLs and headers).
//  2. Skill: with a skill active, a tool not in its allowed tools is denied.
//  3. Mode: a tool whose allowed modes lack the session's mode is denied; in
//     plan mode any call above read risk is denied.
//  4. Overrides: among all policy rules that match, deny beats ask beats
//     allow. An allow rule loosens anything except destructive (which stays
//     ask) and cannot allow an opaque call; a credential call, or a write
//     where code runs later, is loosened only by an allow rule that names
//     its arguments (see Rule).
//  5. Prior approval: a call the user approved earlier in the session, with
//     byte-identical tool and canonical arguments, at a risk no lower than
//     now, is allowed again — never a destructive one.
//  6. Default table (spec §4): read allow; write, execute and network ask;
//     credential deny; destructive ask. In accept-edits mode a write_file
//     or apply_patch judged exactly write (inside the working directory,
//     no protected, credential or configuration path) is allowed instead
//     of asked (after prior approvals); it never reaches a call a rule matched.
//  7. Sandbox: an allowed call of a tool that starts processes, where the
//     sandbox is on but cannot be enforced (Request.Sandbox), is asked.
//  8. Taint: after a tool result the injection scanner flagged earlier in
//     the session, still in the model's context (Request.Taint), a call
//     above read risk, or any call of an MCP server (its arguments, a
//     resource URI among them, go to the server), that would have
//     been allowed (by a rule, a session grant, a prior approval,
//     accept-edits mode or a built-in rule) is asked instead, the reason
//     naming the flagged event's seq. Denials and questions stay as they
//     are, so credential and destructive calls are as strict as ever.
//  9. dont-ask mode: a decision that would ask is a denial at once, its
//     reason saying what would have been asked.
func (Engine) Check(req Request) Decision {
	var j judge
	ps := pathFacts.Get().(*[]pathFact)
	j.paths = (*ps)[:0]
	j.run(&req)
	d := decide(&j.req, &j)
	// The path facts never reach the Decision: clear them and keep the
	// slice for the next call, unless it grew large. Only the facts
	// appended are cleared: the list never shrinks during a call, and
	// what lies past it was cleared before it was put back.
	if cap(j.paths) <= 256 {
		clear(j.paths)
		*ps = j.paths[:0]
		pathFacts.Put(ps)
	}
	return d
}

// pathFacts pools the judge's path lists between calls. It holds no
// semantic state: a list is cleared before it goes back.
var pathFacts = sync.Pool{New: func() any {
	s := make([]pathFact, 0, 8)
	return &s
}}

func decide(req *Request, j *judge) Decision {
	d := decideTree(req, j)
	d.ReadOnly = j.readsOnly()
	if sb := req.Sandbox; d.Decision == Allow && req.Tool.StartsProcesses && sb != nil && !sb.Off {
		// Fail closed: what would run confined is asked instead, never
		// run unconfined in silence.
		why := sb.Unavailable
		if why == "" && !d.ReadOnly {
			why = sb.WritesUnavailable
		}
		if why != "" {
			d.Decision = Ask
			d.Reason = "the sandbox is unavailable here (" + why + "), so a person decides whether it runs unconfined; it would have been allowed: " + d.Reason
		}
	}
	if tn := req.Taint; tn != nil && d.Decision == Allow && (j.level > risk.Read || req.Tool.Namespace != "") {
		d.Decision, d.SourcedFrom = Ask, FromTaint
		d.Reason = taintReason(tn) + d.Reason
	}
	if d.Decision == Ask && req.Mode == ModeDontAsk {
		// dont-ask: nobody is there to answer, so the question is a
		// denial at once. The underlying reason (and rule) stay, so the
		// denial says what would have been asked.
		d.Decision, d.SourcedFrom = Deny, FromMode
		d.Reason = "dont-ask mode turned the question into a denial; it would have asked: " + d.Reason
	}
	return d
}

// taintReason says why a tainted call is asked, before what would have
// allowed it.
func taintReason(tn *Taint) string {
	var b strings.Builder
	b.WriteString("A tool result earlier in this session (")
	if tn.Seq != 0 {
		b.WriteString("event seq ")
		b.WriteString(strconv.FormatUint(tn.Seq, 10))
	}
	if tn.ToolCallID != "" {
		if tn.Seq != 0 {
			b.WriteString(", ")
		}
		// A hook decision names the call alone: the flagged event is
		// in the hook journal, its seq given when it is folded in.
		b.WriteString("call ")
		b.WriteString(quoteText(tn.ToolCallID))
	}
	if tn.Unscanned {
		b.WriteString(") could not be scanned for text that tries to give instructions (too large, or not scanned within the hook's deadline), so it may hold some,")
	} else {
		b.WriteString(") holds text that tries to give instructions")
	}
	if len(tn.Classes) > 0 && !tn.Unscanned {
		b.WriteString(" (")
		b.WriteString(strings.Join(tn.Classes, ", "))
		b.WriteString(")")
	}
	b.WriteString(" and is still in the model's context, so for the rest of the session a person decides every call above read and every call of an MCP server, whose arguments leave custom-agent (start a new session to end this); it would have been allowed: ")
	return b.String()
}

// decideTree is the decision tree of Check, up to the dont-ask step.
func decideTree(req *Request, j *judge) Decision {
	d := Decision{RiskAtDecision: j.level, Findings: j.findings}
	if req.AllowedTools != nil && !toolListed(req.AllowedTools, req.Tool.Name) {
		d.Decision, d.SourcedFrom = Deny, FromSkill
		d.Reason = "The active skill does not list " + quoteText(req.Tool.Name) + " among its allowed tools."
		return d
	}
	if reason, ok := modeDenies(req, j.level); ok {
		d.Decision, d.SourcedFrom, d.Reason = Deny, FromMode, reason
		return d
	}
	m := req.Policy.match(j, false)
	if req.Tool.Changed != nil {
		return definitionChanged(req, j, d, m)
	}
	if r := m.rule; r != nil && r.TightenOnly && r.Decision != Deny {
		// A tighten-only rule counts only where it is stricter than the
		// decision without such rules.
		base := decideMatched(req, j, d, req.Policy.match(j, true))
		if base.Decision.strictness() >= r.Decision.strictness() {
			return base
		}
	}
	return decideMatched(req, j, d, m)
}

// decideMatched finishes a decision once the policy has been matched: the
// matching rule, else the default table and prior approvals.
func decideMatched(req *Request, j *judge, d Decision, m matched) Decision {
	if r := m.rule; r != nil {
		d.SourcedFrom, d.Rule = FromOverride, r.ref()
		d.Decision = r.Decision
		switch {
		case r.Decision == Allow && j.level == risk.Destructive:
			d.Decision = Ask
			d.Reason = subject(req, j) + "; " + ruleName(r) + " allows it, but destructive calls are asked every time."
		case r.Decision == Allow && r.Level == LevelBuiltin:
			d.Reason = builtinReason(r)
		case r.Decision == Allow:
			d.Reason = ruleName(r) + " allows this call" + riskClause(j) + "."
		case r.Decision == Ask:
			d.Reason = ruleName(r) + " asks before this call" + riskClause(j) + "."
		default:
			d.Reason = ruleName(r) + " denies this call" + riskClause(j) + "."
		}
		return d
	}
	d.SourcedFrom = FromDefault
	switch j.level {
	case risk.Read:
		d.Decision = Allow
		d.Reason = "The call only reads inside the working directory; reads are allowed by default."
		if len(j.findings) > 0 || len(req.Tool.PathArgs) == 0 && !req.Tool.PathDefaultsToCwd {
			d.Reason = subjectThen(req, j, "; reads are allowed by default.")
		}
		return d
	case risk.Write, risk.Execute, risk.Network:
		d.Decision = Ask
	case risk.Destructive:
		if f := credentialFinding(j); f != nil {
			// The highest risk names the deletion, but a credential
			// part is denied whatever else the call does: prepending
			// `rm -rf x &&` must not turn the denial of a key read into
			// a question about the deletion.
			d.Decision = Deny
			d.Reason = subjectThen(req, j, "; it also touches a credential ("+findingText(f)+"), and credential calls are denied unless a policy rule that names them allows them, whatever else the call does.")
			d.Reason += unfitNote(m.unfit)
			return d
		}
		d.Decision = Ask
		d.Reason = subjectThen(req, j, "; destructive calls are asked every time.")
		return d
	default:
		d.Decision = Deny
		d.Reason = subjectThen(req, j, "; credential calls are denied unless a policy rule that names them allows them.")
		d.Reason += unfitNote(m.unfit)
		return d
	}
	if priorApproved(req, j.level) {
		d.Decision, d.SourcedFrom = Allow, FromPrior
		d.Reason = "The user approved this exact call earlier in the session" + riskClause(j) + "."
		return d
	}
	if acceptsEdit(req, j) {
		d.Decision, d.SourcedFrom = Allow, FromMode
		d.Reason = subject(req, j) + "; accept-edits mode allows edits inside the working directory without asking."
		return d
	}
	d.Reason = subjectThen(req, j, "; "+j.level.String()+" calls are asked by default.")
	switch {
	case m.unfit != nil && j.opaque:
		d.Reason += " " + ruleName(m.unfit) + " would allow it, but what the call does cannot be judged statically."
	case m.unfit != nil:
		d.Reason += " " + ruleName(m.unfit) + " would allow it, but it does not name the file written, where code runs later."
	}
	d.Reason += req.Policy.builtinNote(j)
	return d
}

// credentialFinding returns the first finding of credential risk, if any.
func credentialFinding(j *judge) *risk.Finding {
	for i := range j.findings {
		if j.findings[i].Risk == risk.Credential {
			return &j.findings[i]
		}
	}
	return nil
}

// unfitNote says why a rule that matched the tool did not decide a
// credential call ("" when none did).
func unfitNote(r *Rule) string {
	switch {
	case r == nil:
		return ""
	case r.Decision == Ask:
		return " " + ruleName(r) + " asks before the tool's calls but does not name this path, command or URL, so it does not turn the denial into a question."
	}
	return " " + ruleName(r) + " allows the tool but does not name this path, command or URL."
}

// findingText is a finding as a reason quotes it: its text, then why.
func findingText(f *risk.Finding) string {
	if f.Text != "" && !strings.Contains(f.Why, f.Text) {
		return "`" + f.Text + "` " + f.Why
	}
	return f.Why
}

// modeDenies returns the reason the session's mode denies the call, if it
// does.
func modeDenies(req *Request, level risk.Level) (string, bool) {
	mode := req.Mode
	if !mode.Valid() {
		return "The session mode " + quoteText(string(mode)) + " is unknown, so nothing is allowed.", true
	}
	if !req.Tool.AllowsMode(mode) {
		return quoteText(req.Tool.Name) + " may not run in " + string(mode.orDefault()) + " mode.", true
	}
	if mode.orDefault() == ModePlan && level > risk.Read {
		return "Plan mode allows only calls that read; this one is judged " + level.String() + ".", true
	}
	return "", false
}

// acceptsEdit reports whether accept-edits mode allows the call without
// asking: a built-in edit tool (write_file, apply_patch) whose judged risk
// is exactly write — every path it names inside the working directory, none
// protected (judged execute: code runs from it later), none a credential,
// policy or configuration file, nothing it does unknown. It is asked only
// where no policy rule matched: a rule the user wrote, ask or deny, wins.
// Other tools that change files are not edits here: shell (sed -i, >) and
// get_diagnostics or run_tests (which may rewrite sources) run code, and an
// MCP tool does whatever its server does.
func acceptsEdit(req *Request, j *judge) bool {
	return req.Mode == ModeAcceptEdits && j.level == risk.Write && !j.opaque && isEditTool(&req.Tool)
}

// isEditTool reports whether t is one of the built-in tools that only edit
// files.
func isEditTool(t *ToolInfo) bool {
	return t.Namespace == "" && t.Kind == KindEdit && (t.Name == "write_file" || t.Name == "apply_patch")
}

// subject says what the call is judged as, naming the finding that raised
// it most: "shell: `rm -rf dist` deletes recursively and cannot be undone".
func subject(req *Request, j *judge) string { return subjectThen(req, j, "") }

// subjectThen is subject(req, j) + tail, built in one allocation: most
// reasons are a subject and a clause.
func subjectThen(req *Request, j *judge, tail string) string {
	if len(j.findings) == 0 {
		// Nothing raised the risk, but what the analyser found still
		// tells the person what the call does: the files it writes, or
		// that it only reads.
		if w := j.foundWords(); w != "" {
			return req.Tool.Name + " " + w + ", and nothing in its arguments raised its base risk, " + j.level.String() + tail
		}
		return req.Tool.Name + " has base risk " + j.level.String() + " and nothing in its arguments raised it" + tail
	}
	f := &j.findings[0]
	quoted := f.Text != "" && !strings.Contains(f.Why, f.Text)
	n := j.relatedMore()
	var num [20]byte
	more := strconv.AppendInt(num[:0], int64(n), 10)
	var b strings.Builder
	b.Grow(len(req.Tool.Name) + len(f.Text) + len(f.Why) + len(more) + len(tail) + 32)
	b.WriteString(req.Tool.Name)
	b.WriteString(": ")
	if quoted {
		b.WriteByte('`')
		b.WriteString(f.Text)
		b.WriteString("` ")
	}
	b.WriteString(f.Why)
	if n > 0 {
		b.WriteString(" (and ")
		b.Write(more)
		b.WriteString(" more finding")
		b.WriteString(plural(n))
		b.WriteString(")")
	}
	b.WriteString(tail)
	return b.String()
}

// reasonNames is how many written files a reason names before it counts
// the rest.
const reasonNames = 3

// foundWords says what the analyser found in a call none of whose
// arguments raised its risk: "writes `x.go`" (the files it writes, by
// the names the call gives them), "only reads" (a shell command every
// part of which has a read-only form), or "" when it found neither.
func (j *judge) foundWords() string {
	var written []string
	extra := 0
	for i := range j.paths {
		p := &j.paths[i]
		switch {
		case !p.write || p.raw == "" || slices.Contains(written, p.raw):
		case len(written) == reasonNames:
			extra++
		default:
			written = append(written, p.raw)
		}
	}
	if len(written) == 0 {
		if j.shell && j.readsOnly() {
			return "only reads"
		}
		return ""
	}
	var b strings.Builder
	b.WriteString("writes ")
	for i, w := range written {
		switch {
		case i == 0:
		case i == len(written)-1 && extra == 0:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(quoteText(w))
	}
	if extra > 0 {
		b.WriteString(" and " + strconv.Itoa(extra) + " more file" + plural(extra))
	}
	return b.String()
}

// relatedMore is how many findings after the first a reason counts. A
// write or execute finding about words that a deletion in the same
// argument spans is left out: it does not bear on the decision (`rm -rf
// node_modules` deletes the packages, so that their code would run later
// is beside the point). Network and credential findings always count: the
// one decides the sandbox's network, the other alone can deny the call.
func (j *judge) relatedMore() int {
	n := 0
	for i := 1; i < len(j.findings); i++ {
		if !j.covered(i) {
			n++
		}
	}
	return n
}

// covered reports whether the i-th finding, of write or execute risk, is
// about words that a destructive finding in the same argument spans too.
func (j *judge) covered(i int) bool {
	f := &j.findings[i]
	if f.Risk >= risk.Network || f.Span.End <= f.Span.Start {
		return false
	}
	for k := range j.findings {
		g := &j.findings[k]
		if g.Risk == risk.Destructive && g.Arg == f.Arg && g.Span.Start <= f.Span.Start && f.Span.End <= g.Span.End {
			return true
		}
	}
	return false
}

// riskClause adds the judged risk and top finding to a rule's reason.
func riskClause(j *judge) string {
	if len(j.findings) == 0 {
		if w := j.foundWords(); w != "" {
			return " (judged " + j.level.String() + "; it " + w + ")"
		}
		return " (judged " + j.level.String() + ")"
	}
	return " (judged " + j.level.String() + ": " + j.findings[0].Why + ")"
}

func ruleName(r *Rule) string {
	s := "Rule " + quoteText(r.ID)
	switch {
	case r.Source != "" && r.Level != "":
		s += " (" + string(r.Level) + ", " + r.Source + ")"
	case r.Level != "":
		s += " (" + string(r.Level) + ")"
	}
	return s
}

// toolListed reports whether a skill's allowed tools name the tool, by name
// or glob.
func toolListed(list []string, name string) bool {
	for _, t := range list {
		if t == name {
			return true
		}
		if g, ok := compileGlob(t, false); ok && g.match(name) {
			return true
		}
	}
	return false
}

// priorApproved reports whether the user approved this exact call earlier
// in the session at a risk no lower than now. Destructive calls never reuse
// an approval (spec §6).
func priorApproved(req *Request, level risk.Level) bool {
	if level >= risk.Destructive || len(req.History) == 0 {
		return false
	}
	var args []byte
	for i := range req.History {
		p := &req.History[i]
		if p.Tool != req.Tool.Name || p.Decision != Allow || !p.ByUser || p.Risk < level || p.Risk >= risk.Destructive {
			continue
		}
		if args == nil {
			b, err := CanonicalArgs(req.Args)
			if err != nil {
				return false
			}
			args = b
		}
		if bytes.Equal(p.Args, args) {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
