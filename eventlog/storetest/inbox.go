package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog"
)

// inboxTests run against stores that are an eventlog.Inbox.
var inboxTests = []struct {
	name string
	fn   func(*testing.T, eventlog.Store, eventlog.Inbox)
}{
	{"InboxOfferThenTake", testInboxOfferTake},
	{"InboxFirstOfferWins", testInboxFirstWins},
	{"InboxQuestionsApart", testInboxApart},
	{"InboxConcurrentOffersOneWins", testInboxConcurrent},
	{"InboxInvalidAnswersRefused", testInboxInvalid},
	{"InboxReusedToolCallIDWithAnotherRequestSeqCanBeAnswered", testInboxReusedCallID},
}

func answer(session, call, option string) eventlog.Answer {
	return eventlog.Answer{SessionID: session, ToolCallID: call, Option: option, UI: "web", At: T0.Add(1500 * time.Microsecond), RequestSeq: 3}
}

func testInboxOfferTake(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	if _, ok, err := in.TakeAnswer(ctx, "s1", "tc_1", 3); err != nil || ok {
		t.Fatalf("TakeAnswer before any offer = ok %v, err %v; want none", ok, err)
	}
	a := answer("s1", "tc_1", "allow_once")
	a.Confirm = "confirm"
	if err := in.OfferAnswer(ctx, a); err != nil {
		t.Fatal(err)
	}
	for range 2 { // taking does not remove it
		got, ok, err := in.TakeAnswer(ctx, "s1", "tc_1", 3)
		if err != nil || !ok {
			t.Fatalf("TakeAnswer after the offer = ok %v, err %v", ok, err)
		}
		if !got.At.Equal(a.At) {
			t.Errorf("At = %v, want %v", got.At, a.At)
		}
		got.At = a.At
		if got != a {
			t.Fatalf("TakeAnswer = %+v, want %+v", got, a)
		}
	}
}

func testInboxFirstWins(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	if err := in.OfferAnswer(ctx, answer("s1", "tc_1", "deny")); err != nil {
		t.Fatal(err)
	}
	second := answer("s1", "tc_1", "allow_once")
	second.UI = "other"
	if err := in.OfferAnswer(ctx, second); !errors.Is(err, eventlog.ErrAnswered) {
		t.Fatalf("second offer to the same question: %v, want ErrAnswered", err)
	}
	got, ok, err := in.TakeAnswer(ctx, "s1", "tc_1", 3)
	if err != nil || !ok || got.Option != "deny" || got.UI != "web" {
		t.Fatalf("after a refused second offer TakeAnswer = %+v, %v, %v; want the first (deny from web)", got, ok, err)
	}
}

func testInboxApart(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	if err := in.OfferAnswer(ctx, answer("s1", "tc_1", "allow_once")); err != nil {
		t.Fatal(err)
	}
	// The same tool call id in another session, and another id in the
	// same session, are other questions.
	if err := in.OfferAnswer(ctx, answer("s2", "tc_1", "deny")); err != nil {
		t.Fatalf("offer to the same tool call id in another session: %v", err)
	}
	for _, q := range [][2]string{{"s1", "tc_2"}, {"s3", "tc_1"}, {"s1", "TC_1"}} {
		if _, ok, err := in.TakeAnswer(ctx, q[0], q[1], 3); err != nil || ok {
			t.Errorf("TakeAnswer(%s, %s) = ok %v, err %v; want none", q[0], q[1], ok, err)
		}
	}
	if got, ok, _ := in.TakeAnswer(ctx, "s2", "tc_1", 3); !ok || got.Option != "deny" {
		t.Errorf("TakeAnswer(s2, tc_1) = %+v, %v; want deny", got, ok)
	}
	if got, ok, _ := in.TakeAnswer(ctx, "s1", "tc_1", 3); !ok || got.Option != "allow_once" {
		t.Errorf("TakeAnswer(s1, tc_1) = %+v, %v; want allow_once", got, ok)
	}
}

func testInboxConcurrent(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := answer("s1", "tc_1", "allow_once")
			a.UI = fmt.Sprintf("ui-%d", i)
			errs[i] = in.OfferAnswer(ctx, a)
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("offers %d and %d both won", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, eventlog.ErrAnswered):
			t.Fatalf("offer %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no offer won")
	}
	got, ok, err := in.TakeAnswer(ctx, "s1", "tc_1", 3)
	if err != nil || !ok || got.UI != fmt.Sprintf("ui-%d", won) {
		t.Fatalf("TakeAnswer = %+v, %v, %v; want the winner ui-%d", got, ok, err, won)
	}
}

func testInboxInvalid(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	for name, edit := range map[string]func(*eventlog.Answer){
		"no session":  func(a *eventlog.Answer) { a.SessionID = "" },
		"no call":     func(a *eventlog.Answer) { a.ToolCallID = "" },
		"no option":   func(a *eventlog.Answer) { a.Option = "" },
		"no seq":      func(a *eventlog.Answer) { a.RequestSeq = 0 },
		"no ui":       func(a *eventlog.Answer) { a.UI = "" },
		"no time":     func(a *eventlog.Answer) { a.At = time.Time{} },
		"seq > int64": func(a *eventlog.Answer) { a.RequestSeq = math.MaxInt64 + 1 },
	} {
		a := answer("s1", "tc_1", "allow_once")
		edit(&a)
		if err := in.OfferAnswer(ctx, a); err == nil || errors.Is(err, eventlog.ErrAnswered) {
			t.Errorf("%s: OfferAnswer = %v, want a refusal", name, err)
		}
	}
	if _, ok, err := in.TakeAnswer(ctx, "s1", "tc_1", 3); err != nil || ok {
		t.Fatalf("a refused offer was stored: ok %v, err %v", ok, err)
	}
}

// testInboxReusedCallID: a tool call id asked again (a model, or a client
// that invents call_0, call_1, ... per turn, reuses it) is another question,
// named by its request seq: an answer to the first request neither blocks
// an answer to the second nor is taken for it.
func testInboxReusedCallID(t *testing.T, _ eventlog.Store, in eventlog.Inbox) {
	ctx := context.Background()
	first := answer("s1", "call_0", "deny") // RequestSeq 3
	if err := in.OfferAnswer(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := in.TakeAnswer(ctx, "s1", "call_0", 9); err != nil || ok {
		t.Fatalf("TakeAnswer for request 9 before its offer = ok %v, err %v; want none (the answer to request 3 is not for it)", ok, err)
	}
	second := answer("s1", "call_0", "allow_once")
	second.RequestSeq = 9
	if err := in.OfferAnswer(ctx, second); err != nil {
		t.Fatalf("an answer to the same tool call id at another request seq: %v, want it stored", err)
	}
	if err := in.OfferAnswer(ctx, second); !errors.Is(err, eventlog.ErrAnswered) {
		t.Fatalf("a second answer to request 9: %v, want ErrAnswered", err)
	}
	for seq, want := range map[uint64]string{3: "deny", 9: "allow_once"} {
		got, ok, err := in.TakeAnswer(ctx, "s1", "call_0", seq)
		if err != nil || !ok || got.Option != want || got.RequestSeq != seq {
			t.Errorf("TakeAnswer(s1, call_0, %d) = %+v, %v, %v; want %s", seq, got, ok, err, want)
		}
	}
	if _, ok, err := in.TakeAnswer(ctx, "s1", "call_0", 0); err != nil || ok {
		t.Errorf("TakeAnswer with no seq = ok %v, err %v; want none", ok, err)
	}
}
