package approval_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestNoTimeout: an ask with executor.NoApprovalTimeout, from the question or
// the broker's default, has no deadline and waits a week for its answer.
func TestNoTimeout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		question time.Duration
		broker   *approval.Options
	}{
		{"question", executor.NoApprovalTimeout, nil},
		{"broker default", 0, &approval.Options{DefaultTimeout: executor.NoApprovalTimeout}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := approval.New(tt.broker)
				q := question("tc_1", risk.Execute)
				q.Timeout = tt.question
				done, p := ask(t.Context(), b, q)
				if !p.Deadline.IsZero() {
					t.Errorf("deadline %v, want none", p.Deadline)
				}
				time.Sleep(7 * 24 * time.Hour)
				synctest.Wait()
				select {
				case r := <-done:
					t.Fatalf("Ask without a timeout returned unanswered: %+v", r)
				default:
				}
				if err := b.Answer(p.ID, executor.OptionAllowOnce, event.ActorUser); err != nil {
					t.Fatal(err)
				}
				if r := <-done; r.err != nil || !r.ans.Allow || r.ans.Actor != event.ActorUser {
					t.Fatalf("Ask = %+v, %v", r.ans, r.err)
				}
			})
		})
	}
}
