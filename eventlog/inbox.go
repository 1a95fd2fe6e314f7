package eventlog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Answer is a person's answer to an open question, given in a UI that is not
// the process that asked.
//
// A question is named by its session, tool call id and the seq of its
// permission.requested event (a tool call id may be reused). Answers live outside
// the sessions' hash chains: they are offers, and only the asking process's
// permission.resolved, in the chain, says how a question ended.
type Answer struct {
	SessionID  string    `json:"sessionId"`
	ToolCallID string    `json:"toolCallId"`
	Option     string    `json:"option"`            // one of the options the question offered (e.g. "allow_once", "deny")
	Confirm    string    `json:"confirm,omitempty"` // what the person typed to confirm a destructive call
	UI         string    `json:"ui"`                // which UI answered: "web", ...
	At         time.Time `json:"at"`
	// RequestSeq is the seq of the permission.requested event the answer
	// is to, as the UI read it from the log (required, > 0). A model may
	// give two calls the same tool call id; the seq tells their questions
	// apart, and the asking process takes the answer only for the
	// question with that seq.
	RequestSeq uint64 `json:"requestSeq,omitempty"`
}

// Inbox carries answers between processes: a UI offers an answer, the
// process that asked takes it and records permission.resolved itself, so the
// log stays the one source of truth.
//
// A store that is an Inbox holds at most one answer per question (session,
// tool call id, request seq), for as long as it holds the session: the first offer wins
// and every later one fails with ErrAnswered. Taking an answer does not
// remove it. All methods may be called concurrently, from any number of
// processes sharing the store.
type Inbox interface {
	// OfferAnswer stores a. It fails with an error wrapping ErrAnswered when
	// an answer to the same question was already offered.
	OfferAnswer(ctx context.Context, a Answer) error
	// TakeAnswer returns the answer offered to the question, the
	// permission.requested at requestSeq with that tool call id, if any
	// (ok=false when none). An answer to another request of the same tool
	// call id is never returned.
	TakeAnswer(ctx context.Context, sessionID, toolCallID string, requestSeq uint64) (a Answer, ok bool, err error)
}

// ErrAnswered: an answer to the question was already offered.
var ErrAnswered = errors.New("question already answered")

// CheckAnswer refuses an answer a store must not take: one that names no
// session, tool call, request seq, option or UI, or no time, or a request
// seq beyond what a store's signed 64-bit column holds. Stores call it in
// OfferAnswer.
func CheckAnswer(a Answer) error {
	switch {
	case a.SessionID == "":
		return errors.New("offer answer: no session id")
	case a.ToolCallID == "":
		return errors.New("offer answer: no tool call id")
	case a.RequestSeq == 0:
		return errors.New("offer answer: no request seq (the seq of the permission.requested answered)")
	case a.RequestSeq > math.MaxInt64:
		return fmt.Errorf("offer answer: request seq %d is out of range", a.RequestSeq)
	case a.Option == "":
		return errors.New("offer answer: no option")
	case a.UI == "":
		return errors.New("offer answer: no UI named")
	case a.At.IsZero():
		return errors.New("offer answer: no time")
	}
	return nil
}
