package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/sandbox"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// clean makes one line of untrusted text (from a model, a tool, a
// repository) readable and inert: secrets masked, control, bidi and
// invisible characters shown escaped. html/template then escapes markup,
// so <script>, a javascript: URL or a markdown image are shown as text.
func clean(s string) string { return termtext.Line(secrets.Mask(s)) }

// prose is clean for text written about a call (a reason, a finding's
// why): only what is a secret on its own is masked, so that a key name in
// it ("reads credentials: ~/.aws/credentials") does not hide the words
// after it. The executor masked the call's own secrets from it already.
func prose(s string) string { return termtext.Line(secrets.MaskTokens(s)) }

// cleanText is clean for text of several lines.
func cleanText(s string) string { return termtext.Escape(secrets.Mask(s)) }

// riskName is a level's name; an unknown level is shown as destructive's
// colour with its own words.
func riskName(l risk.Level) string {
	if l == risk.Unknown {
		return "unknown"
	}
	return l.String()
}

var funcs = template.FuncMap{
	"clean":     clean,
	"prose":     prose,
	"cleanText": cleanText,
	"riskName":  riskName,
	"riskWords": cli.RiskWords,
	"rule":      func(r permission.Rule) string { return clean(cli.DescribeRule(r)) },
	"upper":     strings.ToUpper,
	"stamp":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"rfc3339":   func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"unixms":    func(t time.Time) int64 { return t.UnixMilli() },
}

type page struct {
	Title string
	Nav   string
	Data  any
}

func (s *Server) render(w http.ResponseWriter, name string, p page) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		s.opts.Logger.Error("rendering a page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// refresh brings the index up to date before a page is drawn, so a page
// never shows less than the log holds.
func (s *Server) refresh(ctx context.Context) {
	if err := s.index.Refresh(ctx); err != nil {
		s.opts.Logger.Warn("reading the log", "err", err)
	}
}

// sessionRow is one line of the sessions page.
type sessionRow struct {
	*Session
	State     string
	Decisions []string
	Verified  bool
	ChainErr  string
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	s.refresh(r.Context())
	var rows []sessionRow
	for _, sess := range s.index.Sessions() {
		row := sessionRow{Session: sess, State: sess.State()}
		for o, n := range sess.Outcomes {
			row.Decisions = append(row.Decisions, fmt.Sprintf("%d %s by %s", n, o.Decision, o.Actor))
		}
		slices.Sort(row.Decisions)
		switch err := s.index.Verify(r.Context(), sess.Info.ID); {
		case err == nil:
			row.Verified = true
		default:
			row.ChainErr = err.Error()
		}
		rows = append(rows, row)
	}
	s.render(w, "sessions.html", page{Title: "Sessions", Nav: "sessions", Data: sessionsData{Rows: rows, Form: s.turnForm()}})
}

// sessionsData is the sessions page: the sessions, and the form that
// starts a new one.
type sessionsData struct {
	Rows []sessionRow
	Form turnForm
}

// sessionData is a session's page: the session, the form that continues
// it, and whether this process runs its turn (which it can cancel).
type sessionData struct {
	*Session
	Form turnForm
	Here bool
}

// askRow is one question of the queue.
type askRow struct {
	*Ask
	Waited string
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request) {
	s.refresh(r.Context())
	now := s.opts.Now()
	var rows []askRow
	for _, a := range s.index.Queue() {
		rows = append(rows, askRow{Ask: a, Waited: now.Sub(a.At).Round(time.Second).String()})
	}
	s.render(w, "queue.html", page{Title: "Questions", Nav: "queue", Data: rows})
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	s.refresh(r.Context())
	sess, ok := s.index.Session(r.PathValue("id"))
	if !ok {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	d := sessionData{Session: sess, Form: s.turnForm()}
	if s.opts.Turns != nil {
		d.Here = s.opts.Turns.Running(sess.Info.ID)
	}
	s.render(w, "session.html", page{Title: "Session " + sess.Info.ID, Nav: "sessions", Data: d})
}

// dialog is the approval dialog's content.
type dialog struct {
	Ask         *Ask
	Level       risk.Level
	Destructive bool
	Args        string // masked, indented JSON
	Findings    []findingView
	DiffSummary string
	Diff        []cli.DiffLine
	Rules       []string
	Sandbox     string
	Options     []optionView
	ConfirmWord string
	Answering   bool   // an inbox is configured and the question can be answered here
	Elsewhere   string // the hook's agent, when the question is answered there only
}

type findingView struct {
	Risk                risk.Level
	Arg, Why            string
	Before, Span, After string // the argument with the finding's span marked
}

type optionView struct {
	Option, Label, Help string
	Confirm             bool
}

func (s *Server) askPage(w http.ResponseWriter, r *http.Request) {
	s.refresh(r.Context())
	sess, ok := s.index.Session(r.PathValue("id"))
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if !ok || err != nil {
		http.Error(w, "no such session or question", http.StatusNotFound)
		return
	}
	var ask *Ask
	for _, a := range sess.Asks {
		if a.Seq == seq {
			ask = a
		}
	}
	if ask == nil {
		s.render(w, "answered.html", page{Title: "Answered", Nav: "queue", Data: s.outcomeOf(r.Context(), sess.Info.ID, seq)})
		return
	}
	s.render(w, "ask.html", page{Title: "Approval needed", Nav: "queue", Data: s.dialogFor(ask)})
}

// pendingAt is the broker's view of an ask at level l, for the broker's
// own rules on destructive calls.
func pendingAt(l risk.Level) approval.Pending {
	return approval.Pending{Question: executor.Question{Decision: permission.Decision{RiskAtDecision: l}}}
}

// destructive reports whether a level gets the destructive treatment (an
// unknown level does, as in every UI).
func destructive(l risk.Level) bool { return pendingAt(l).Destructive() }

// needsConfirm reports whether option needs the confirmation word typed at
// level l, by the rule the terminal and the relay apply.
func needsConfirm(l risk.Level, option string) bool {
	return approval.NeedsConfirm(pendingAt(l), option)
}

func (s *Server) dialogFor(a *Ask) dialog {
	q := a.Req
	d := dialog{Ask: a, Level: q.RiskAtDecision, Destructive: destructive(q.RiskAtDecision),
		ConfirmWord: cli.ConfirmWord, Answering: s.opts.Inbox != nil && a.Source == "", Elsewhere: a.Source}
	masked := secrets.MaskJSON(q.Args)
	var pretty bytes.Buffer
	if json.Indent(&pretty, masked, "", "  ") == nil {
		d.Args = pretty.String()
	} else {
		d.Args = string(masked)
	}
	var args map[string]any
	_ = json.Unmarshal(q.Args, &args)
	for _, f := range q.Findings {
		fv := findingView{Risk: f.Risk, Arg: f.Arg, Why: f.Why, Span: f.Text}
		if v, ok := args[f.Arg].(string); ok && f.Span.Start >= 0 && f.Span.Start <= f.Span.End && f.Span.End <= len(v) && v[f.Span.Start:f.Span.End] == f.Text {
			fv.Before, fv.After = v[:f.Span.Start], v[f.Span.End:]
		}
		d.Findings = append(d.Findings, fv)
	}
	if q.RiskAtDecision != risk.Credential {
		// The terminal diffs a write_file against the file as it is; a
		// credential file is never read for a page.
		d.DiffSummary, d.Diff, _ = cli.EditDiff(q.Tool, q.Args, a.Cwd, s.opts.ReadFile)
	}
	if q.NoRuleReason != "" {
		d.Rules = append(d.Rules, q.NoRuleReason)
	}
	for _, r := range []struct {
		raw    json.RawMessage
		option string
		verb   string
	}{{q.SessionRule, executor.OptionAllowSession, " adds the session rule: "}, {q.ProjectRule, executor.OptionAllowProject, " writes to the project policy: "}} {
		var rule permission.Rule
		if len(r.raw) > 0 && json.Unmarshal(r.raw, &rule) == nil {
			d.Rules = append(d.Rules, r.option+r.verb+cli.DescribeRule(rule))
		}
	}
	d.Sandbox = sandboxWords(a)
	for _, o := range q.Options {
		if d.Destructive && o != executor.OptionAllowOnce && o != executor.OptionAllowUnsandboxed && o != executor.OptionDeny {
			continue // never offered for a destructive call, whatever the log says
		}
		d.Options = append(d.Options, optionView{Option: o, Label: cli.OptionLabel(o, d.Destructive),
			Help: cli.OptionHelp(o, d.Destructive), Confirm: needsConfirm(q.RiskAtDecision, o)})
	}
	if !slices.ContainsFunc(d.Options, func(o optionView) bool { return o.Option == executor.OptionDeny }) {
		d.Options = append(d.Options, optionView{Option: executor.OptionDeny, Label: cli.OptionLabel(executor.OptionDeny, d.Destructive)})
	}
	return d
}

// sandboxWords says what the processes the call starts (if it starts any)
// will run under, from the session's sandbox setting and the decision, as
// the executor derives it (sandbox.KindFor).
func sandboxWords(a *Ask) string {
	switch {
	case a.Sandbox == "off":
		return "no sandbox (turned off for this session)"
	case strings.HasPrefix(a.Sandbox, "unavailable"):
		return "no sandbox (" + a.Sandbox + ")"
	}
	kind, network := sandbox.KindFor(permission.Decision{RiskAtDecision: a.Req.RiskAtDecision, Findings: a.Req.Findings})
	info := event.SandboxInfo{Profile: string(kind), Network: network}
	return info.Words() + " (for the processes it starts)"
}

// resolution is how an ask ended, read from the log.
type resolution struct {
	Found      bool
	SessionID  string
	Seq        uint64
	ToolCallID string
	Decision   string
	Actor      event.Actor
	Option     string
	Reason     string
	UI         string
}

// Words says how it ended, as the terminal does.
func (r resolution) Words() string {
	if !r.Found {
		return "no answer is recorded yet"
	}
	// Every part comes from the log, the reason may quote a call's
	// arguments: cleaned like any other untrusted text, for the page and
	// for the answer's JSON (which the page shows as text).
	via := ""
	if r.UI != "" {
		via = " via " + clean(r.UI)
	}
	if r.Decision == "allow" {
		return fmt.Sprintf("allowed (%s) by %s%s", clean(r.Option), clean(string(r.Actor)), via)
	}
	return fmt.Sprintf("denied by %s%s: %s", clean(string(r.Actor)), via, prose(r.Reason))
}

// outcomeOf finds the permission.resolved that closed the ask at seq
// (approval.Resolution, the relay's own reading of the log).
func (s *Server) outcomeOf(ctx context.Context, sessionID string, seq uint64) resolution {
	res := resolution{SessionID: sessionID, Seq: seq}
	p, ok, err := approval.Resolution(ctx, s.opts.Log, sessionID, seq)
	if err != nil || !ok {
		return res
	}
	return resolution{Found: true, SessionID: sessionID, Seq: seq, ToolCallID: p.ToolCallID, Decision: p.Decision,
		Actor: p.Actor, Option: p.Option, Reason: p.Reason, UI: p.UI}
}

// matchResolution follows a session's events from the ask at seq: the
// first event names the tool call (*tcid), and the first later
// permission.resolved of that call is its outcome.
func matchResolution(e event.Event, seq uint64, tcid *string) (resolution, bool) {
	if e.Seq == seq {
		var p event.PermissionRequestedPayload
		if e.Type == event.PermissionRequested && json.Unmarshal(e.Payload, &p) == nil {
			*tcid = p.ToolCallID
		}
		return resolution{}, false
	}
	if e.Type != event.PermissionResolved || *tcid == "" {
		return resolution{}, false
	}
	var p event.PermissionResolvedPayload
	if json.Unmarshal(e.Payload, &p) != nil || p.ToolCallID != *tcid {
		return resolution{}, false
	}
	return resolution{Found: true, SessionID: e.SessionID, Seq: seq, ToolCallID: p.ToolCallID, Decision: p.Decision,
		Actor: p.Actor, Option: p.Option, Reason: p.Reason, UI: p.UI}, true
}

var errNoAsk = errors.New("no such question")

// openAsk finds the open ask at seq of a session, reading the log first.
func (s *Server) openAsk(ctx context.Context, sessionID string, seq uint64) (*Ask, error) {
	s.refresh(ctx)
	sess, ok := s.index.Session(sessionID)
	if !ok {
		return nil, fmt.Errorf("%w: session %q", errNoAsk, sessionID)
	}
	for _, a := range sess.Asks {
		if a.Seq == seq {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: session %s has no open question at seq %d", errNoAsk, sessionID, seq)
}
