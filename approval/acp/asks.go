package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
)

// approver is the sessions' Approver: the broker, plus the session deny
// rule of a "deny for this session" answer, made in the executor's
// goroutine before the executor records the answer.
type approver struct{ a *Agent }

func (ap *approver) Ask(ctx context.Context, q executor.Question) (executor.Answer, error) {
	ans, err := ap.a.cfg.Broker.Ask(ctx, q)
	ss, serr := ap.a.session(acpsdk.SessionId(q.SessionID))
	if serr != nil {
		return ans, err
	}
	ss.mu.Lock()
	rule, chosen := ss.denySession[q.ToolCallID]
	delete(ss.denySession, q.ToolCallID)
	turnID := ss.turnID
	ss.mu.Unlock()
	// Only the person's own deny makes the rule: a timeout or a
	// cancellation that won the race does not.
	if !chosen || err != nil || ans.Allow || ans.Actor != event.ActorUser {
		return ans, err
	}
	if ss.rules == nil {
		ans.Reason += "; no policy store, so no session deny rule was made"
		return ans, nil
	}
	if aerr := ss.rules.AddSession(rule); aerr != nil {
		ans.Reason += "; the session deny rule could not be made: " + aerr.Error()
		return ans, nil
	}
	raw, _ := json.Marshal(rule)
	d, derr := event.NewDraft(ss.id, turnID, ap.a.now(), event.PolicyChangedPayload{Level: "session", Op: "add", Rule: raw, Cwd: ss.cwd})
	if derr == nil {
		_, derr = ap.a.cfg.Store.Append(context.WithoutCancel(ctx), d)
	}
	if derr != nil {
		// The rule holds in memory but is not in the log: say so, and
		// fail the call's chain as the executor would.
		return ans, fmt.Errorf("%w: recording the session deny rule: %w", executor.ErrLog, derr)
	}
	return ans, nil
}

// cancelGrace is how long a "cancelled" outcome waits for the client's
// session/cancel to end the ask before it denies the ask itself.
const cancelGrace = time.Second

// denyRuleFor turns the session rule an ask proposes (an allow) into the
// deny rule "deny for this session" makes.
func denyRuleFor(q executor.Question) (permission.Rule, bool) {
	if q.SessionRule == nil {
		return permission.Rule{}, false
	}
	r := *q.SessionRule
	r.Decision = permission.Deny
	r.ID = "deny-" + strings.TrimPrefix(r.ID, "allow-")
	return r, true
}

// routeAsks puts every ask of the broker that belongs to one of this
// connection's sessions to the client, and withdraws the request when the
// ask is resolved otherwise (timeout, cancellation).
func (a *Agent) routeAsks(ctx context.Context, notices <-chan approval.Notice) {
	for n := range notices {
		switch n.Kind {
		case approval.NoticeAsked:
			ss, err := a.session(acpsdk.SessionId(n.Pending.Question.SessionID))
			if err != nil {
				continue // another UI's session
			}
			rctx, cancel := context.WithCancel(ctx)
			a.mu.Lock()
			a.asks[n.Pending.ID] = cancel
			a.mu.Unlock()
			go a.request(rctx, ss, n.Pending)
		case approval.NoticeResolved:
			a.mu.Lock()
			cancel, ok := a.asks[n.Pending.ID]
			delete(a.asks, n.Pending.ID)
			a.mu.Unlock()
			if ok {
				cancel() // withdraws a request still out ($/cancel_request)
			}
		}
	}
}

// permOption is one option of a request, with the answer it stands for.
type permOption struct {
	acpsdk.PermissionOption
	answer string
}

// options maps the ask's answers to ACP options (DESIGN.md §6). A
// destructive call offers allow once and deny only.
func options(p approval.Pending) []permOption {
	var out []permOption
	for _, o := range p.Options {
		switch o {
		case optAllowOnce:
			name := "Allow once"
			if p.Destructive() {
				name = "Allow once (destructive: cannot be undone; asked again every time)"
			} else {
				name = "Allow once (the same call may run again in this session)"
			}
			out = append(out, permOption{acpsdk.PermissionOption{OptionId: optAllowOnce, Kind: acpsdk.PermissionOptionKindAllowOnce, Name: name}, o})
		case optAllowSession:
			name := "Allow for this session"
			if r := p.Question.SessionRule; r != nil {
				name += ": " + ruleText(*r)
			}
			out = append(out, permOption{acpsdk.PermissionOption{OptionId: optAllowSession, Kind: acpsdk.PermissionOptionKindAllowAlways, Name: name}, o})
		case optAllowProject:
			name := "Always allow in this project (.custom-agent/policy.json)"
			if r := p.Question.ProjectRule; r != nil {
				name += ": " + ruleText(*r)
			}
			out = append(out, permOption{acpsdk.PermissionOption{OptionId: optAllowProject, Kind: acpsdk.PermissionOptionKindAllowAlways, Name: name}, o})
		case optAllowUnsandboxed:
			name := "Run once without the sandbox (your secrets, any file and the network are reachable; never remembered)"
			out = append(out, permOption{acpsdk.PermissionOption{OptionId: optAllowUnsandboxed, Kind: acpsdk.PermissionOptionKindAllowOnce, Name: name}, o})
		case optDeny:
			out = append(out, permOption{acpsdk.PermissionOption{OptionId: optDeny, Kind: acpsdk.PermissionOptionKindRejectOnce, Name: "Deny"}, o})
		}
	}
	if _, ok := denyRuleFor(p.Question); ok && !p.Destructive() {
		name := "Deny for this session: " + ruleText(*p.Question.SessionRule)
		out = append(out, permOption{acpsdk.PermissionOption{OptionId: optDenySession, Kind: acpsdk.PermissionOptionKindRejectAlways, Name: name}, optDenySession})
	}
	return out
}

// ruleText is what a rule matches, for a person.
func ruleText(r permission.Rule) string {
	if cmd, ok := permission.ExactCommand(r); ok {
		return r.Tool + ", exactly the command " + cmd
	}
	parts := []string{r.Tool}
	if r.Command != "" {
		parts = append(parts, "command "+r.Command)
	}
	if r.Path != "" {
		parts = append(parts, "path "+r.Path)
	}
	if r.URL != "" {
		parts = append(parts, "url "+r.URL)
	}
	return strings.Join(parts, ", ")
}

// request sends session/request_permission for an ask and answers the
// broker with the option the person chose.
func (a *Agent) request(ctx context.Context, ss *sess, p approval.Pending) {
	defer func() {
		a.mu.Lock()
		if c, ok := a.asks[p.ID]; ok {
			c()
			delete(a.asks, p.ID)
		}
		a.mu.Unlock()
	}()
	opts := options(p)
	acpOpts := make([]acpsdk.PermissionOption, len(opts))
	for i, o := range opts {
		acpOpts[i] = o.PermissionOption
	}
	// The title, kind and locations come from the question itself, never
	// from the state kept under the call's id: a model may give two calls
	// one id, and the question must show the call that would run.
	cs := newCallState(ss.cwd, p.Question.ToolCallID, p.Question.Tool.Name, p.Question.Args)
	title := fmt.Sprintf("%s (risk: %s)", cs.title, p.Question.Decision.RiskAtDecision)
	pending := acpsdk.ToolCallStatusPending
	kind := cs.kind
	req := acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(ss.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(p.Question.ToolCallID),
			Title:      &title, Kind: &kind, Status: &pending,
			Locations: cs.locations(), RawInput: rawInput(p.Question.Args),
			Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(whyAsked(p)))},
		},
		Options: acpOpts,
	}
	resp, err := a.conn.RequestPermission(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return // withdrawn: the ask was resolved otherwise
		}
		a.deny(p.ID, event.ActorSystem, "the editor did not answer the permission request: "+errText(err))
		return
	}
	switch {
	case resp.Outcome.Cancelled != nil:
		// The client answers so after session/cancel (ACP): the turn's
		// cancellation resolves the ask. A client that says cancelled
		// without cancelling the turn gets the same answer shortly.
		select {
		case <-ctx.Done():
		case <-time.After(cancelGrace):
			a.deny(p.ID, event.ActorSystem, approval.ReasonCancelled)
		}
	case resp.Outcome.Selected != nil:
		id := string(resp.Outcome.Selected.OptionId)
		var chosen *permOption
		for i := range opts {
			if string(opts[i].OptionId) == id {
				chosen = &opts[i]
			}
		}
		switch {
		case chosen == nil:
			// Not offered: it grants nothing. The call is denied by the
			// system, so the turn does not wait for a timeout.
			a.log.Warn("permission answer names an option not offered; refused", "session", ss.id, "ask", p.ID, "option", id)
			a.deny(p.ID, event.ActorSystem, fmt.Sprintf("the editor answered with option %q, which was not offered; denied", id))
		case chosen.answer == optDenySession:
			rule, _ := denyRuleFor(p.Question)
			ss.mu.Lock()
			ss.denySession[p.Question.ToolCallID] = rule
			ss.mu.Unlock()
			if err := a.cfg.Broker.DenyVia(p.ID, event.ActorUser, UIName, "user denied for this session (session rule "+rule.ID+")"); err != nil {
				ss.mu.Lock()
				delete(ss.denySession, p.Question.ToolCallID)
				ss.mu.Unlock()
				a.log.Warn("permission answer refused", "session", ss.id, "ask", p.ID, "err", err)
			}
		case chosen.answer == optDeny:
			a.deny(p.ID, event.ActorUser, "")
		default:
			if err := a.cfg.Broker.AnswerVia(p.ID, chosen.answer, event.ActorUser, UIName); err != nil {
				a.log.Warn("permission answer refused", "session", ss.id, "ask", p.ID, "err", err)
			}
		}
	default:
		a.deny(p.ID, event.ActorSystem, "the editor's answer had no outcome; denied")
	}
}

// UIName is the name the editor's answers carry in permission.resolved's
// ui.
const UIName = "acp"

func (a *Agent) deny(id string, actor event.Actor, reason string) {
	ui := ""
	if actor == event.ActorUser {
		ui = UIName
	}
	if err := a.cfg.Broker.DenyVia(id, actor, ui, reason); err != nil && !errors.Is(err, approval.ErrAlreadyAnswered) {
		a.log.Warn("permission answer refused", "ask", id, "err", err)
	} else if err != nil {
		a.log.Info("permission answer arrived after the ask was resolved; refused", "ask", id, "err", err)
	}
}

func errText(err error) string {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// whyAsked is the content of a permission request: the risk, the reason
// and the findings, so the person sees why they are asked.
func whyAsked(p approval.Pending) string {
	d := p.Question.Decision
	var b strings.Builder
	fmt.Fprintf(&b, "Risk: %s\nWhy: %s", d.RiskAtDecision, d.Reason)
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "\n- %s", f.Why)
		if f.Text != "" {
			fmt.Fprintf(&b, " (%s: %q)", f.Arg, f.Text)
		}
	}
	if p.Destructive() {
		b.WriteString("\nThis call is destructive: it cannot be undone, and it is asked every time.")
	}
	if p.Question.NoRuleReason != "" {
		b.WriteString("\nNo rule is offered: " + p.Question.NoRuleReason)
	}
	return b.String()
}
