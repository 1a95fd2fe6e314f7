package approval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

func question(callID string, level risk.Level) executor.Question {
	d := permission.Decision{Decision: permission.Ask, Reason: "asks", RiskAtDecision: level, SourcedFrom: permission.FromDefault}
	return executor.Question{
		SessionID:  "s1",
		ToolCallID: callID,
		Tool:       permission.ToolInfo{Name: "shell", Risk: level},
		Args:       []byte(`{"command":"npm test"}`),
		Decision:   d,
		Options:    executor.OfferedOptions(d, true, true),
	}
}

type result struct {
	ans executor.Answer
	err error
}

// ask starts b.Ask in a goroutine and waits until the ask is pending.
func ask(ctx context.Context, b *approval.Broker, q executor.Question) (<-chan result, approval.Pending) {
	ch := make(chan result, 1)
	before := len(b.Pending())
	go func() {
		a, err := b.Ask(ctx, q)
		ch <- result{a, err}
	}()
	synctest.Wait()
	ps := b.Pending()
	if len(ps) != before+1 {
		panic(fmt.Sprintf("want %d pending asks, have %d", before+1, len(ps)))
	}
	return ch, ps[len(ps)-1]
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		level  risk.Level
		option string
		actor  event.Actor
		want   executor.Answer
	}{
		{"allow once", risk.Execute, executor.OptionAllowOnce, event.ActorUser,
			executor.Answer{Allow: true, Option: "allow_once", Actor: "user", Reason: "user approved (allow_once)"}},
		{"allow session", risk.Execute, executor.OptionAllowSession, "",
			executor.Answer{Allow: true, Option: "allow_session", Actor: "user", Reason: "user approved (allow_session)"}},
		{"allow project", risk.Write, executor.OptionAllowProject, event.ActorUser,
			executor.Answer{Allow: true, Option: "allow_project", Actor: "user", Reason: "user approved (allow_project)"}},
		{"deny", risk.Network, executor.OptionDeny, event.ActorUser,
			executor.Answer{Option: "deny", Actor: "user", Reason: "user denied"}},
		{"destructive allow once", risk.Destructive, executor.OptionAllowOnce, event.ActorUser,
			executor.Answer{Allow: true, Option: "allow_once", Actor: "user", Reason: "user approved (allow_once)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := approval.New(nil)
				done, p := ask(t.Context(), b, question("tc_1", tt.level))
				if err := b.Answer(p.ID, tt.option, tt.actor); err != nil {
					t.Fatalf("Answer: %v", err)
				}
				r := <-done
				if r.err != nil {
					t.Fatalf("Ask: %v", r.err)
				}
				if diff := cmp.Diff(tt.want, r.ans); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				if n := len(b.Pending()); n != 0 {
					t.Errorf("%d asks still pending", n)
				}
			})
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		timeout    time.Duration
		broker     *approval.Options
		wantAfter  time.Duration
		wantReason string
	}{
		{"default 30s", 0, nil, 30 * time.Second, "timeout: no answer within 30s"},
		{"question timeout", 5 * time.Second, nil, 5 * time.Second, "timeout: no answer within 5s"},
		{"broker default", 0, &approval.Options{DefaultTimeout: time.Minute}, time.Minute, "timeout: no answer within 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := approval.New(tt.broker)
				q := question("tc_1", risk.Execute)
				q.Timeout = tt.timeout
				start := time.Now()
				done, p := ask(t.Context(), b, q)
				if got := p.Deadline.Sub(start); got != tt.wantAfter {
					t.Errorf("deadline after %v, want %v", got, tt.wantAfter)
				}
				time.Sleep(tt.wantAfter - time.Nanosecond)
				synctest.Wait()
				select {
				case r := <-done:
					t.Fatalf("Ask returned before the deadline: %+v", r)
				default:
				}
				r := <-done
				if elapsed := time.Since(start); elapsed != tt.wantAfter {
					t.Errorf("Ask returned after %v, want %v", elapsed, tt.wantAfter)
				}
				want := executor.Answer{Actor: event.ActorSystem, Reason: tt.wantReason}
				if r.err != nil || r.ans != want {
					t.Errorf("Ask = %+v, %v; want %+v, nil", r.ans, r.err, want)
				}
				// A person answering just too late is told so.
				if err := b.Answer(p.ID, executor.OptionAllowOnce, event.ActorUser); !errors.Is(err, approval.ErrAlreadyAnswered) {
					t.Errorf("late Answer: %v, want ErrAlreadyAnswered", err)
				}
			})
		})
	}
}

func TestFirstAnswerWins(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := approval.New(nil)
		done, p := ask(t.Context(), b, question("tc_1", risk.Execute))
		if err := b.Answer(p.ID, executor.OptionDeny, event.ActorUser); err != nil {
			t.Fatal(err)
		}
		for _, try := range []func() error{
			func() error { return b.Answer(p.ID, executor.OptionAllowOnce, event.ActorUser) },
			func() error { return b.Answer(p.ID, executor.OptionDeny, event.ActorUser) },
			func() error { return b.Deny(p.ID, event.ActorSystem, "approval input closed") },
		} {
			err := try()
			if !errors.Is(err, approval.ErrAlreadyAnswered) {
				t.Errorf("second answer: %v, want ErrAlreadyAnswered", err)
			}
		}
		if r := <-done; r.ans.Allow || r.ans.Reason != "user denied" {
			t.Errorf("Ask = %+v, want the first answer (user denied)", r.ans)
		}
	})
}

func TestRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := approval.New(nil)
		q := question("tc_1", risk.Destructive)
		// Even if the executor offered more, a destructive call gets only
		// allow once and deny.
		q.Options = []string{executor.OptionAllowOnce, executor.OptionAllowSession, executor.OptionAllowProject}
		done, p := ask(t.Context(), b, q)
		if diff := cmp.Diff([]string{"allow_once", "deny"}, p.Options); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
		for _, o := range []string{executor.OptionAllowSession, executor.OptionAllowProject, "yes", ""} {
			if err := b.Answer(p.ID, o, event.ActorUser); !errors.Is(err, approval.ErrNotOffered) {
				t.Errorf("Answer(%q) = %v, want ErrNotOffered", o, err)
			}
		}
		if err := b.Answer("ask-999", executor.OptionDeny, event.ActorUser); !errors.Is(err, approval.ErrUnknownAsk) {
			t.Errorf("Answer(unknown id) = %v, want ErrUnknownAsk", err)
		}
		// Refusals leave the ask pending.
		if n := len(b.Pending()); n != 1 {
			t.Fatalf("%d pending, want 1", n)
		}
		if err := b.Deny(p.ID, event.ActorUser, "destructive call not confirmed"); err != nil {
			t.Fatal(err)
		}
		want := executor.Answer{Option: "deny", Actor: event.ActorUser, Reason: "destructive call not confirmed"}
		if r := <-done; r.ans != want || r.err != nil {
			t.Errorf("Ask = %+v, %v; want %+v", r.ans, r.err, want)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := approval.New(nil)
		ctx, cancel := context.WithCancel(t.Context())
		done, p := ask(ctx, b, question("tc_1", risk.Execute))
		time.Sleep(10 * time.Second)
		cancel()
		r := <-done
		want := executor.Answer{Actor: event.ActorSystem, Reason: "the turn was cancelled while waiting for approval"}
		if r.ans != want || !errors.Is(r.err, context.Canceled) {
			t.Errorf("Ask = %+v, %v; want %+v, context.Canceled", r.ans, r.err, want)
		}
		if err := b.Answer(p.ID, executor.OptionAllowOnce, event.ActorUser); !errors.Is(err, approval.ErrAlreadyAnswered) {
			t.Errorf("Answer after cancel: %v, want ErrAlreadyAnswered", err)
		}

		// Already cancelled: no ask is announced.
		a, err := b.Ask(ctx, question("tc_2", risk.Execute))
		if a != want || !errors.Is(err, context.Canceled) {
			t.Errorf("Ask(cancelled ctx) = %+v, %v", a, err)
		}
		if n := len(b.Pending()); n != 0 {
			t.Errorf("%d pending, want 0", n)
		}
	})
}

// TestSubscribers: every UI sees the ask, the first answer wins, and all
// are told how it ended; a UI attaching late still sees what is pending.
func TestSubscribers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := approval.New(nil)
		ctx, stop := context.WithCancel(t.Context())
		early := b.Subscribe(ctx)
		done, p := ask(t.Context(), b, question("tc_1", risk.Execute))
		late := b.Subscribe(ctx)

		for name, ch := range map[string]<-chan approval.Notice{"early": early, "late": late} {
			n := <-ch
			if n.Kind != approval.NoticeAsked || n.Pending.ID != p.ID || n.Pending.Question.ToolCallID != "tc_1" {
				t.Errorf("%s: first notice %v %+v", name, n.Kind, n.Pending)
			}
		}
		// Both UIs answer; the web one is first.
		errWeb := b.Answer(p.ID, executor.OptionAllowSession, event.ActorUser)
		errTerm := b.Answer(p.ID, executor.OptionDeny, event.ActorUser)
		if errWeb != nil || !errors.Is(errTerm, approval.ErrAlreadyAnswered) {
			t.Errorf("answers: %v, %v", errWeb, errTerm)
		}
		for name, ch := range map[string]<-chan approval.Notice{"early": early, "late": late} {
			n := <-ch
			if n.Kind != approval.NoticeResolved || n.Pending.ID != p.ID || n.Answer.Option != "allow_session" {
				t.Errorf("%s: second notice %v %+v", name, n.Kind, n.Answer)
			}
		}
		if r := <-done; r.ans.Option != "allow_session" {
			t.Errorf("Ask = %+v", r.ans)
		}
		stop()
		for range early {
		}
		for range late {
		}
	})
}

// TestManyAsks: many concurrent asks, answered from many goroutines in an
// arbitrary order, each get their own answer; the rest time out.
func TestManyAsks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		b := approval.New(nil)
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		notices := b.Subscribe(ctx)

		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				a, err := b.Ask(t.Context(), question(fmt.Sprintf("tc_%d", i), risk.Execute))
				results[i] = result{a, err}
			})
		}
		synctest.Wait()
		ps := b.Pending()
		if len(ps) != n {
			t.Fatalf("%d pending, want %d", len(ps), n)
		}
		// Answer the even calls twice, concurrently: allow once and deny race.
		wins := make(chan string, n)
		var answerers sync.WaitGroup
		for _, p := range ps {
			var i int
			if _, err := fmt.Sscanf(p.Question.ToolCallID, "tc_%d", &i); err != nil || i%2 != 0 {
				continue
			}
			for _, o := range []string{executor.OptionAllowOnce, executor.OptionDeny} {
				answerers.Go(func() {
					if err := b.Answer(p.ID, o, event.ActorUser); err == nil {
						wins <- p.Question.ToolCallID + "=" + o
					} else if !errors.Is(err, approval.ErrAlreadyAnswered) {
						t.Errorf("Answer: %v", err)
					}
				})
			}
		}
		answerers.Wait()
		close(wins)
		won := map[string]string{}
		for w := range wins {
			id, o, _ := strings.Cut(w, "=")
			if prev, dup := won[id]; dup {
				t.Errorf("%s answered twice: %s and %s", id, prev, o)
			}
			won[id] = o
		}
		time.Sleep(approval.DefaultTimeout)
		wg.Wait()

		for i, r := range results {
			id := fmt.Sprintf("tc_%d", i)
			if i%2 == 0 {
				if r.ans.Option != won[id] || r.ans.Actor != event.ActorUser {
					t.Errorf("%s: %+v, want the winning answer %s", id, r.ans, won[id])
				}
			} else if r.ans.Actor != event.ActorSystem || r.ans.Allow {
				t.Errorf("%s: %+v, want a timeout", id, r.ans)
			}
		}
		// The subscriber saw each ask asked once and resolved once, in that
		// order.
		seen := map[string][]approval.NoticeKind{}
		for range 2 * n {
			x := <-notices
			seen[x.Pending.ID] = append(seen[x.Pending.ID], x.Kind)
		}
		for id, kinds := range seen {
			if diff := cmp.Diff([]approval.NoticeKind{approval.NoticeAsked, approval.NoticeResolved}, kinds); diff != "" {
				t.Errorf("%s notices (-want +got):\n%s", id, diff)
			}
		}
		if len(seen) != n {
			t.Errorf("notices for %d asks, want %d", len(seen), n)
		}
	})
}

// TestAskWaitsForTheUIToShowTheOutcome: an ask a UI is showing returns
// its answer only once that UI has shown how it ended (Shown), so that
// the outcome a person reads comes before what the call does next; a UI
// that never says so holds the call for MaxShowWait at most, and an ask
// no UI is showing returns at once.
func TestAskWaitsForTheUIToShowTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name      string
		show      bool          // a UI calls Showing
		shownWait time.Duration // after the answer; -1: never calls Shown
		want      time.Duration // how long after the answer Ask returns
	}{
		{"shown", true, 40 * time.Millisecond, 40 * time.Millisecond},
		{"never shown", true, -1, approval.MaxShowWait},
		{"not showing", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := approval.New(nil)
				notes := b.Subscribe(t.Context())
				returned := make(chan time.Time, 1)
				go func() {
					if _, err := b.Ask(t.Context(), question("tc_1", risk.Execute)); err != nil {
						t.Error(err)
					}
					returned <- time.Now()
				}()
				n := <-notes
				if tc.show && !b.Showing(n.Pending.ID) {
					t.Fatal("Showing a pending ask reported false")
				}
				if err := b.Answer(n.Pending.ID, executor.OptionDeny, event.ActorUser); err != nil {
					t.Fatal(err)
				}
				answered := time.Now()
				if tc.show && tc.shownWait >= 0 {
					time.Sleep(tc.shownWait)
					b.Shown(n.Pending.ID)
				}
				if got := (<-returned).Sub(answered); got != tc.want {
					t.Errorf("Ask returned %v after the answer, want %v", got, tc.want)
				}
				if b.Showing(n.Pending.ID) {
					t.Error("Showing a resolved ask reported true")
				}
			})
		})
	}
}
