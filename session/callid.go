package session

import (
	"encoding/json"
	"fmt"

	"github.com/custom-agent/custom-agent/event"
)

// Tool call ids are unique in a session. The model's endpoint picks them,
// and every reader of the log (the model's context, the executor's
// question and answer, the web index, replay) follows a call by its id: a
// response that gives two calls one id, or reuses the id of an earlier
// call (a hostile endpoint, or a server that numbers each response's calls
// from 0), would make two calls one. A repeated id is therefore recorded
// renamed (<id>_2, <id>_3, …, the first unused), with the model's own id in
// the event's modelId. The renamed id is the one the model is sent back
// with the call and its result: providers take any id the client's history
// gives, as long as call and result agree, and the new one keeps the
// characters of the old (Anthropic allows letters, digits, _ and -).

// noteCallIDs records the tool call ids of events in evs (the session's events
// read so far, then those of this process not yet read back) that it has
// not seen; the first scanned of them are s.logged's, which are not
// scanned again.
func (s *Session) noteCallIDs(evs []event.Event) {
	if s.callIDs == nil {
		s.callIDs = map[string]bool{}
	}
	for i := s.idScan; i < len(evs); i++ {
		e := evs[i]
		if e.Type != event.ModelToolCallRequested && e.Type != event.PermissionRequested {
			continue
		}
		var p struct {
			ToolCallID string `json:"toolCallId"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.ToolCallID != "" {
			s.callIDs[p.ToolCallID] = true
		}
	}
	s.idScan = len(s.logged)
}

// uniqueCallID returns id, or, when the session has a call of that id
// already, the first of id_2, id_3, … it has not; the id returned is
// taken.
func (s *Session) uniqueCallID(id string) string {
	if s.callIDs == nil {
		s.callIDs = map[string]bool{}
	}
	out := id
	for n := 2; s.callIDs[out]; n++ {
		out = fmt.Sprintf("%s_%d", id, n)
	}
	s.callIDs[out] = true
	return out
}
