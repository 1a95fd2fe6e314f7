package session

import (
	"encoding/json"

	"github.com/custom-agent/custom-agent/secrets"
)

// maskedArgs is what model.tool_call_requested records: the arguments with
// secrets masked. Arguments that are not a JSON object are recorded as a
// JSON string, so the event is still valid and the executor rejects the
// call at validation.
func maskedArgs(raw json.RawMessage) json.RawMessage {
	if !json.Valid(raw) {
		b, _ := json.Marshal(string(raw))
		return secrets.MaskJSON(b)
	}
	return secrets.MaskJSON(raw)
}
