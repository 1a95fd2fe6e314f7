package eventlog

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"

	"github.com/custom-agent/custom-agent/event"
)

// CheckBatch refuses a batch no store may take, whatever the store: blobs
// with no event to name them, a blob that does not hash to its digest, a
// draft naming a seq (a batch takes the next ones), drafts of more than
// one session. Each draft is then checked by the store itself. Stores call
// it first in AppendBatchBlobs.
func CheckBatch(drafts []event.Draft, blobs []Blob) error {
	if len(drafts) == 0 && len(blobs) > 0 {
		return errors.New("append batch: blobs without an event to name them")
	}
	for i, b := range blobs {
		if sha256.Sum256(b.Data) != b.Sum {
			return fmt.Errorf("append batch: blob %d does not hash to its digest %x", i+1, b.Sum)
		}
	}
	for i, d := range drafts {
		if d.Seq != 0 {
			return fmt.Errorf("append batch: draft %d (%s) names seq %d: a batch takes the next seqs, so its drafts name none", i+1, d.Type, d.Seq)
		}
		if d.SessionID != drafts[0].SessionID {
			return fmt.Errorf("append batch: draft %d is for session %q, the batch for %q: a batch is one session's", i+1, d.SessionID, drafts[0].SessionID)
		}
	}
	return nil
}

// CheckDraft refuses a draft no store may take, whatever the store, and
// canonicalises it: an empty session id, an unknown type, no timestamp, a
// seq beyond what a store's signed 64-bit column holds. Stores call it for
// each draft, in the appender's goroutine rather than the writer's, after
// their own read-only check.
func CheckDraft(d event.Draft) (event.Prepared, error) {
	if d.SessionID == "" {
		return event.Prepared{}, errors.New("append: empty session id")
	}
	if !d.Type.Known() {
		return event.Prepared{}, fmt.Errorf("append: unknown event type %q", d.Type)
	}
	if d.TS.IsZero() {
		return event.Prepared{}, errors.New("append: draft has no timestamp")
	}
	if d.Seq > math.MaxInt64 {
		return event.Prepared{}, fmt.Errorf("append: seq %d is out of range", d.Seq)
	}
	p, err := event.Prepare(d)
	if err != nil {
		return event.Prepared{}, fmt.Errorf("append: %w", err)
	}
	return p, nil
}
