package session

import (
	"context"

	"github.com/custom-agent/custom-agent/replay/record"
)

// snapshotPolicy records the policy the next decisions are made under as a
// policy.snapshot, when it differs from the last one this session recorded
// (the first turn of every process records one). It joins the next durable
// commit, so it is durable before any decision made under it, and a replay
// (package replay) takes it instead of folding policy.changed events.
func (t *turn) snapshotPolicy(ctx context.Context) error {
	s := t.s
	var rules any = s.info.Rules
	snap := record.Snapshot(s.info.Policy, rules)
	if snap.Digest == s.snapshot {
		return nil
	}
	if err := t.emit(context.WithoutCancel(ctx), snap); err != nil {
		return err
	}
	s.snapshot = snap.Digest
	return nil
}
