package eventlog

import (
	"context"

	"github.com/custom-agent/custom-agent/event"
)

// BatchAppender is implemented by stores that can write several events in
// one durable commit. A writer that defers events (see MayDefer) hands them
// over with the next event that must be durable, in one AppendBatch.
type BatchAppender interface {
	// AppendBatch appends the drafts of one session, in order, in one
	// transaction: every draft is written or none is, and the sealed
	// events are returned, and offered to subscribers, only once the
	// commit is durable. The drafts must not name an expected seq
	// (Draft.Seq 0); a batch that does, or holds an invalid draft, is
	// refused whole. Like Append, once queued it waits for the outcome
	// even if ctx is cancelled.
	AppendBatch(ctx context.Context, drafts []event.Draft) ([]event.Event, error)
}

// deferrable are the types whose events gate nothing a person or a process
// sees: each may wait in its writer's memory and join the next durable
// commit, in order, instead of paying for a commit of its own. A deferred
// event is never shown to a reader before that commit (it is not in the
// store until then), and a crash loses only deferred events, never an
// acknowledged one.
//
// Everything else is durable before its writer goes on: permission.resolved
// before the tool starts, permission.requested before a person is asked,
// turn.completed before the turn is reported ended, policy.changed before a
// rule is used, user.message (a person's words) before the model is called,
// and every type not listed here, including types added later, so that the
// default is the safe one.
var deferrable = map[event.Type]bool{
	event.SessionStarted:         true, // joins the turn's user.message
	event.TurnStarted:            true, // joins the turn's user.message
	event.ContextBuilt:           true,
	event.ModelDelta:             true,
	event.ModelToolCallRequested: true,
	event.ToolStarted:            true,
	event.ToolCompleted:          true,
	event.ToolFailed:             true,
	// A snapshot gates nothing itself: it joins the commit of the next
	// decision (or user.message), in order, so it is durable before any
	// decision made under it.
	event.PolicySnapshot: true,
	// A flag on the model's reply gates nothing (it taints nothing); it
	// goes with the reply's model.delta events.
	event.ModelReplyFlagged: true,
}

// MayDefer reports whether an event of type t may join the next durable
// commit rather than be durable before its writer goes on. Unknown types
// are durable.
func MayDefer(t event.Type) bool { return deferrable[t] }

// Blob is a tool output an event names by its SHA-256 digest (a
// tool.completed artifact), handed to the store with the events of the
// commit that first names it.
type Blob struct {
	Sum  [32]byte
	Data []byte
}

// BlobAppender is implemented by stores that keep small blobs beside the
// events: AppendBatchBlobs writes the blobs in the same transaction as the
// drafts, so the one commit that makes an event durable makes the output
// it names durable too (instead of a second fsync, of a file of outputs,
// before it). A blob the store already holds is kept as it is.
type BlobAppender interface {
	BatchAppender
	// AppendBatchBlobs is AppendBatch with blobs: all of it is written
	// or none.
	AppendBatchBlobs(ctx context.Context, drafts []event.Draft, blobs []Blob) ([]event.Event, error)
	// Blob returns the bytes of the blob with that SHA-256; found is
	// false when the store holds none.
	Blob(ctx context.Context, sum [32]byte) (data []byte, found bool, err error)
}
