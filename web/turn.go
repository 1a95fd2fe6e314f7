package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/eventlog"
)

// Turns starts and cancels turns in this server's process (custom-agent
// serve wires it to the configured model and the process's runtime). Its
// questions are answered like any other: POST /api/answer, the store's
// inbox, the process's relay.
type Turns interface {
	// Start begins a turn on a new session (SessionID "") in Cwd, or on
	// the recorded session SessionID (in its last directory, Cwd), and
	// returns the session's id once the turn's first event is in the log;
	// the turn goes on after Start returns. It fails with ErrTurnRunning
	// when this process runs a turn in that session already, and with an
	// error wrapping eventlog.ErrSessionBusy when another process holds
	// the session.
	Start(ctx context.Context, t TurnRequest) (sessionID string, err error)
	// Cancel cancels the turn this process runs in the session and waits
	// (at most until ctx ends) for it to end; ErrNotRunning when this
	// process runs none there.
	Cancel(ctx context.Context, sessionID string) error
	// Running reports whether this process runs a turn in the session.
	Running(sessionID string) bool
	// Model names the model new turns use, or says (help) why there is
	// none and how to configure one.
	Model() (name, help string)
	// Cwd is the directory a new session starts in unless another is
	// given.
	Cwd() string
	// Revoke removes the session rule RuleID of a recorded session in
	// which no turn runs, in the directory the rule was made in (Cwd),
	// records the removal (policy.changed) and returns the rule in
	// words. It fails with ErrTurnRunning when this process runs a turn
	// there, with an error wrapping eventlog.ErrSessionBusy when another
	// process holds the session (the rule lives in that process), and
	// with ErrNoRule when the session has no such rule there.
	Revoke(ctx context.Context, r RevokeRequest) (rule string, err error)
	// RevokeApproval drops one prior approval, named by the seq of the
	// permission.resolved that made it (Seq), of a recorded session in
	// which no turn runs, resumed in the directory it was made in (Cwd),
	// and records it (policy.changed op revoke_approval). Its errors are Revoke's, with ErrNoApproval for
	// an approval the session does not hold.
	RevokeApproval(ctx context.Context, r ApprovalRevokeRequest) error
}

// ApprovalRevokeRequest names one prior approval to revoke: Seq is the
// seq of the permission.resolved that made it, Cwd where it was made.
type ApprovalRevokeRequest struct {
	SessionID, Cwd string
	Seq            uint64
}

// ErrNoApproval: the session holds no such prior approval there.
var ErrNoApproval = errors.New("the session holds no such prior approval")

// RevokeRequest names a session rule to revoke.
type RevokeRequest struct {
	SessionID, Cwd, RuleID string
}

// ErrNoRule: the session holds no session rule with that id in that
// directory.
var ErrNoRule = errors.New("the session holds no such session rule")

// TurnRequest is one prompt from the browser.
type TurnRequest struct {
	SessionID string // "" for a new session
	Cwd       string // absolute
	Prompt    string
}

// ErrTurnRunning: this process already runs a turn in the session.
var ErrTurnRunning = errors.New("this server is already running a turn in this session")

// ErrNotRunning: this process runs no turn in the session.
var ErrNotRunning = errors.New("this server runs no turn in this session")

// maxPrompt bounds a prompt from the browser (the body is bounded too).
const maxPrompt = 32 << 10

type turnRequest struct {
	SessionID string `json:"sessionId,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Prompt    string `json:"prompt"`
}

type turnResponse struct {
	SessionID string `json:"sessionId,omitempty"`
	URL       string `json:"url,omitempty"`
	Message   string `json:"message"`
}

// turnForm is what the prompt forms show.
type turnForm struct {
	Enabled   bool   // a Turns is configured
	Model     string // the model's name, "" when there is none
	ModelHelp string // how to configure one
	Cwd       string // a new session's default directory
}

func (s *Server) turnForm() turnForm {
	if s.opts.Turns == nil {
		return turnForm{}
	}
	name, help := s.opts.Turns.Model()
	return turnForm{Enabled: true, Model: name, ModelHelp: help, Cwd: s.opts.Turns.Cwd()}
}

// startTurn is POST /api/turn: a prompt on a new session (cwd, default the
// server's) or on a recorded one (sessionId, in its last directory).
func (s *Server) startTurn(w http.ResponseWriter, r *http.Request) {
	if s.opts.Turns == nil {
		writeJSON(w, http.StatusServiceUnavailable, turnResponse{Message: "starting turns from the browser is off for this server"})
		return
	}
	var req turnRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the body is not one turn object {sessionId or cwd, prompt}"})
		return
	}
	if strings.TrimSpace(req.Prompt) == "" {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the prompt is empty"})
		return
	}
	if len(req.Prompt) > maxPrompt {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the prompt is too long (at most 32 KiB from the browser)"})
		return
	}
	if name, help := s.opts.Turns.Model(); name == "" {
		writeJSON(w, http.StatusServiceUnavailable, turnResponse{Message: "no model is configured for this server: " + help})
		return
	}
	t := TurnRequest{Prompt: req.Prompt}
	switch {
	case req.SessionID != "" && req.Cwd != "":
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "give either a session to continue or a directory for a new session, not both"})
		return
	case req.SessionID != "":
		s.refresh(r.Context())
		sess, ok := s.index.Session(req.SessionID)
		if !ok {
			writeJSON(w, http.StatusNotFound, turnResponse{Message: "no such session"})
			return
		}
		if sess.Source != "" {
			writeJSON(w, http.StatusBadRequest, turnResponse{Message: "this is a hook session of " + clean(sess.Source) + ": it is not continued here"})
			return
		}
		t.SessionID, t.Cwd = sess.Info.ID, sess.Cwd
	default:
		t.Cwd = req.Cwd
		if t.Cwd == "" {
			t.Cwd = s.opts.Turns.Cwd()
		}
		if !filepath.IsAbs(t.Cwd) {
			writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the directory must be an absolute path"})
			return
		}
	}
	id, err := s.opts.Turns.Start(r.Context(), t)
	switch {
	case errors.Is(err, ErrTurnRunning):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: t.SessionID,
			Message: "this server is already running a turn in this session: wait for it to end, or cancel it"})
		return
	case errors.Is(err, eventlog.ErrSessionBusy):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: t.SessionID,
			Message: "another custom-agent process (run, chat or acp) is running this session, and only one process may run a session at a time: wait for it to end there, or start a new session"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, turnResponse{SessionID: t.SessionID, Message: "the turn did not start: " + cleanText(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, turnResponse{SessionID: id, URL: "/session/" + id, Message: "the turn started"})
}

type cancelRequest struct {
	SessionID string `json:"sessionId"`
}

// cancelTurn is POST /api/cancel: it cancels a turn this process runs. A
// turn another process runs is not reachable from here, and the answer
// says so.
func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) {
	if s.opts.Turns == nil {
		writeJSON(w, http.StatusServiceUnavailable, turnResponse{Message: "this server runs no turns"})
		return
	}
	var req cancelRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.SessionID == "" {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the body is not one cancel object {sessionId}"})
		return
	}
	err := s.opts.Turns.Cancel(r.Context(), req.SessionID)
	if errors.Is(err, ErrNotRunning) {
		s.refresh(r.Context())
		if sess, ok := s.index.Session(req.SessionID); ok && sess.State() != StateEnded {
			writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID,
				Message: "this turn is run by another custom-agent process (run, chat or acp), not by this server: cancel it where it runs (Ctrl-C); the browser cannot"})
			return
		}
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID, Message: "no turn is running in this session"})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, turnResponse{SessionID: req.SessionID, Message: "cancelling: " + clean(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, turnResponse{SessionID: req.SessionID, Message: "the turn was cancelled"})
}

type revokeRequest struct {
	SessionID string `json:"sessionId"`
	RuleID    string `json:"ruleId"`
}

// revokeRule is POST /api/revoke: it removes a session rule of a session
// no process runs now (the removal is recorded as policy.changed, and a
// resumed session no longer has the rule). A rule of a session another
// process runs lives in that process: the answer says where to revoke it.
func (s *Server) revokeRule(w http.ResponseWriter, r *http.Request) {
	if s.opts.Turns == nil {
		writeJSON(w, http.StatusServiceUnavailable, turnResponse{Message: "this server cannot revoke rules"})
		return
	}
	var req revokeRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.SessionID == "" || req.RuleID == "" {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the body is not one revoke object {sessionId, ruleId}"})
		return
	}
	s.refresh(r.Context())
	sess, ok := s.index.Session(req.SessionID)
	if !ok {
		writeJSON(w, http.StatusNotFound, turnResponse{Message: "no such session"})
		return
	}
	if sess.Source != "" {
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID, Message: "a hook session's rules are not revoked here"})
		return
	}
	cwd := ""
	for _, g := range sess.Rules {
		if g.Rule.ID == req.RuleID {
			cwd = g.Cwd
		}
	}
	if cwd == "" {
		writeJSON(w, http.StatusNotFound, turnResponse{SessionID: req.SessionID, Message: "the session holds no session rule " + clean(req.RuleID)})
		return
	}
	rule, err := s.opts.Turns.Revoke(r.Context(), RevokeRequest{SessionID: req.SessionID, Cwd: cwd, RuleID: req.RuleID})
	switch {
	case errors.Is(err, ErrTurnRunning):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID, Message: "this server is running a turn in this session: revoke the rule once it has ended"})
	case errors.Is(err, eventlog.ErrSessionBusy):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID,
			Message: "another custom-agent process (run, chat or acp) runs this session and holds its rules: revoke it there (/permissions revoke " + clean(req.RuleID) + " in chat), or once it has ended, here"})
	case errors.Is(err, ErrNoRule):
		writeJSON(w, http.StatusNotFound, turnResponse{SessionID: req.SessionID, Message: "the session holds no session rule " + clean(req.RuleID) + " in " + clean(cwd)})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, turnResponse{SessionID: req.SessionID, Message: "revoking: " + clean(err.Error())})
	default:
		writeJSON(w, http.StatusOK, turnResponse{SessionID: req.SessionID, Message: "revoked: " + clean(rule) + "; the calls it allowed are asked again"})
	}
}

type revokeApprovalRequest struct {
	SessionID string `json:"sessionId"`
	Seq       uint64 `json:"seq"`
}

// revokeApproval is POST /api/revoke-approval: it revokes one prior
// approval, named by its session and the seq of the permission.resolved
// that made it, of a session no process runs now (recorded as
// policy.changed op revoke_approval); the same call is then asked again.
func (s *Server) revokeApproval(w http.ResponseWriter, r *http.Request) {
	if s.opts.Turns == nil {
		writeJSON(w, http.StatusServiceUnavailable, turnResponse{Message: "this server cannot revoke approvals"})
		return
	}
	var req revokeApprovalRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.SessionID == "" || req.Seq == 0 {
		writeJSON(w, http.StatusBadRequest, turnResponse{Message: "the body is not one revoke object {sessionId, seq}"})
		return
	}
	s.refresh(r.Context())
	sess, ok := s.index.Session(req.SessionID)
	if !ok {
		writeJSON(w, http.StatusNotFound, turnResponse{Message: "no such session"})
		return
	}
	if sess.Source != "" {
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID, Message: "a hook session's approvals are not revoked here"})
		return
	}
	var pr *PriorApproval
	for i := range sess.Priors {
		if sess.Priors[i].Seq == req.Seq {
			pr = &sess.Priors[i]
		}
	}
	if pr == nil {
		writeJSON(w, http.StatusNotFound, turnResponse{SessionID: req.SessionID, Message: fmt.Sprintf("the session holds no prior approval made at seq %d", req.Seq)})
		return
	}
	err := s.opts.Turns.RevokeApproval(r.Context(), ApprovalRevokeRequest{SessionID: req.SessionID, Cwd: pr.Cwd, Seq: pr.Seq})
	switch {
	case errors.Is(err, ErrTurnRunning):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID, Message: "this server is running a turn in this session: revoke the approval once it has ended"})
	case errors.Is(err, eventlog.ErrSessionBusy):
		writeJSON(w, http.StatusConflict, turnResponse{SessionID: req.SessionID,
			Message: "another custom-agent process (run, chat or acp) runs this session and holds its approvals: revoke once it has ended"})
	case errors.Is(err, ErrNoApproval):
		writeJSON(w, http.StatusNotFound, turnResponse{SessionID: req.SessionID, Message: "the session holds no such prior approval in " + clean(pr.Cwd)})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, turnResponse{SessionID: req.SessionID, Message: "revoking: " + clean(err.Error())})
	default:
		writeJSON(w, http.StatusOK, turnResponse{SessionID: req.SessionID, Message: "revoked the approval of " + clean(pr.Tool) + "; the same call is asked again"})
	}
}
