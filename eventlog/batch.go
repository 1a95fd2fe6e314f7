package eventlog

import (
	"crypto/sha256"
	"errors"
	"fmt"

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
