package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/executor"
)

// answerRequest is the body of POST /api/answer. Seq names the
// permission.requested event the person saw, so an answer never reaches a
// later ask of the same tool call id.
type answerRequest struct {
	SessionID  string `json:"sessionId"`
	Seq        uint64 `json:"seq"`
	ToolCallID string `json:"toolCallId"`
	Option     string `json:"option"`
	Confirm    string `json:"confirm,omitempty"`
}

// answerResponse says whether the answer won and how the ask ended.
type answerResponse struct {
	Won     bool   `json:"won"`
	Pending bool   `json:"pending,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	if s.opts.Inbox == nil {
		writeJSON(w, http.StatusServiceUnavailable, answerResponse{Message: "answering from the browser is off: this log has no inbox"})
		return
	}
	var req answerRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		writeJSON(w, http.StatusBadRequest, answerResponse{Message: "the body is not one answer object"})
		return
	}
	if req.SessionID == "" || req.Seq == 0 || req.ToolCallID == "" || req.Option == "" {
		writeJSON(w, http.StatusBadRequest, answerResponse{Message: "sessionId, seq, toolCallId and option are required"})
		return
	}
	ctx := r.Context()
	ask, err := s.openAsk(ctx, req.SessionID, req.Seq)
	if err != nil {
		if res := s.outcomeOf(ctx, req.SessionID, req.Seq); res.Found && res.ToolCallID == req.ToolCallID {
			writeJSON(w, http.StatusConflict, answerResponse{Outcome: res.Words(),
				Message: "too late: this question was already answered (" + res.Words() + ")"})
			return
		}
		writeJSON(w, http.StatusNotFound, answerResponse{Message: clean(err.Error())})
		return
	}
	if ask.Source != "" {
		writeJSON(w, http.StatusConflict, answerResponse{Message: "this question was asked through a hook of " + clean(ask.Source) + ": answer it there"})
		return
	}
	if ask.Req.ToolCallID != req.ToolCallID {
		writeJSON(w, http.StatusConflict, answerResponse{Message: "the question at that seq is for another tool call"})
		return
	}
	dangerous := destructive(ask.Req.RiskAtDecision)
	offered := slices.Contains(ask.Req.Options, req.Option) || req.Option == executor.OptionDeny
	if dangerous && req.Option != executor.OptionAllowOnce && req.Option != executor.OptionAllowUnsandboxed && req.Option != executor.OptionDeny {
		offered = false
	}
	if !offered {
		writeJSON(w, http.StatusBadRequest, answerResponse{Message: fmt.Sprintf("%q is not offered for this question", clean(req.Option))})
		return
	}
	if needsConfirm(ask.Req.RiskAtDecision, req.Option) && !approval.Confirmed(req.Confirm) {
		writeJSON(w, http.StatusBadRequest, answerResponse{Message: "this call is destructive: type " + cli.ConfirmWord + " to allow it"})
		return
	}
	if dl := ask.Deadline(); !dl.IsZero() && !s.opts.Now().Before(dl) {
		writeJSON(w, http.StatusConflict, answerResponse{Message: "too late: the question's time ran out (it is denied)"})
		return
	}
	err = s.opts.Inbox.OfferAnswer(ctx, Answer{SessionID: req.SessionID, ToolCallID: req.ToolCallID, Option: req.Option,
		Confirm: req.Confirm, UI: UIName, At: s.opts.Now(), RequestSeq: req.Seq})
	if errors.Is(err, eventlog.ErrAnswered) {
		res := s.outcomeOf(ctx, req.SessionID, req.Seq)
		writeJSON(w, http.StatusConflict, answerResponse{Outcome: res.Words(), Message: "another answer came first"})
		return
	}
	if err != nil {
		s.opts.Logger.Error("offering an answer", "err", err)
		writeJSON(w, http.StatusInternalServerError, answerResponse{Message: "the answer could not be stored: " + clean(err.Error())})
		return
	}
	res, ok := s.awaitResolution(ctx, req.SessionID, req.Seq)
	if !ok {
		writeJSON(w, http.StatusAccepted, answerResponse{Pending: true,
			Message: "the answer is stored; the asking process has not recorded the outcome yet"})
		return
	}
	won := res.Actor == event.ActorUser && res.UI == UIName &&
		(req.Option == executor.OptionDeny && res.Decision == "deny" || req.Option != executor.OptionDeny && res.Option == req.Option && res.Decision == "allow")
	resp := answerResponse{Won: won, Outcome: res.Words()}
	if won {
		resp.Message = "your answer was recorded: " + res.Words()
	} else {
		resp.Message = "another answer came first: " + res.Words()
	}
	writeJSON(w, http.StatusOK, resp)
}

// awaitResolution follows the session from the ask until its
// permission.resolved is in the log, at most AnswerWait.
func (s *Server) awaitResolution(ctx context.Context, sessionID string, seq uint64) (resolution, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.AnswerWait)
	defer cancel()
	var tcid string
	for e, err := range eventlog.Follow(ctx, s.opts.Log, sessionID, seq, s.opts.Poll) {
		if err != nil {
			return resolution{}, false
		}
		if res, ok := matchResolution(e, seq, &tcid); ok {
			return res, true
		}
	}
	return resolution{}, false
}
