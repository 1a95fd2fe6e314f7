// Package approval is the broker between the executor, which asks a person
// about a tool call, and the approval UIs (the terminal now, web and ACP
// later), which show the ask and send back an answer.
//
// Combining rule: the first answer wins. Every attached UI sees every ask;
// whichever answers first resolves it (a timeout and a cancelled turn are
// answers too, by the system), and every later answer is refused with
// ErrAlreadyAnswered. All UIs are then told how the ask was resolved.
//
// Delivery: a subscriber receives, in order, a NoticeAsked for every ask
// pending when it subscribed and for each new one, and a NoticeResolved when
// an ask ends. Delivery never blocks the broker or an asking executor: each
// subscriber has its own unbounded queue, so a slow UI only delays itself.
//
// The broker keeps no state across processes. A UI of another process (the
// web UI) answers through the event log's store (eventlog.Inbox), and Relay,
// run by the asking process, hands its answers to the broker; OpenAsks and
// Resolution read a session's questions and their outcomes from the log.
// Asks a dead process left pending in the event log are closed by
// RecoverPending on start-up.
package approval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// DefaultTimeout is how long an ask waits when its Question names no
// timeout (DESIGN.md §6).
const DefaultTimeout = 30 * time.Second

// Reasons the system gives when it resolves an ask itself.
const (
	ReasonCancelled = "the turn was cancelled while waiting for approval"
	ReasonRestarted = "process restarted"
)

var (
	// ErrAlreadyAnswered: the ask was resolved by an earlier answer (from
	// another UI, a timeout or a cancellation).
	ErrAlreadyAnswered = errors.New("ask already answered")
	// ErrNotOffered: the option is not among the ask's options (e.g.
	// allow_session for a destructive call).
	ErrNotOffered = errors.New("option not offered for this ask")
	// ErrUnknownAsk: no ask with that id was made by this broker.
	ErrUnknownAsk = errors.New("no such ask")
)

// Pending is an ask waiting for an answer, as a UI sees it. It is a
// snapshot: the broker never changes it after handing it out, and the
// receiver must not modify its slices (Question.Args, Options).
type Pending struct {
	// ID names the ask in Answer and Deny. It is unique among all asks of
	// this broker, so an answer can never reach a later ask of the same
	// tool call id.
	ID       string
	Question executor.Question
	// Options are the answers offered, in display order; OptionDeny is
	// always among them.
	Options []string
	Asked   time.Time
	// Deadline is when the ask resolves to deny unanswered; zero when it
	// has none (executor.NoApprovalTimeout).
	Deadline time.Time
}

// Destructive reports whether the ask is for a destructive call (or one
// whose risk is unknown, which every UI must treat as destructive): only
// allow once and deny are offered, and a UI must get a typed confirmation
// before it sends allow once.
func (p Pending) Destructive() bool {
	l := p.Question.Decision.RiskAtDecision
	return l == risk.Unknown || l >= risk.Destructive
}

// ConfirmWord is what a person types to confirm allowing a destructive
// call, in every UI: the terminal (typed, then Enter; or a line of its own
// without a TTY) and a UI of another process (Answer.Confirm, checked by
// Relay).
const ConfirmWord = "confirm"

// NeedsConfirm reports whether answering p with option needs ConfirmWord
// typed first: an option that lets a destructive (or unknown-risk) call
// run (allow once, with or without the sandbox).
func NeedsConfirm(p Pending, option string) bool {
	return p.Destructive() && (option == executor.OptionAllowOnce || option == executor.OptionAllowUnsandboxed)
}

// Confirmed reports whether what a person typed confirms a destructive
// call: ConfirmWord, spaces around it aside.
func Confirmed(typed string) bool { return strings.TrimSpace(typed) == ConfirmWord }

// ReasonNotConfirmed is the reason of the deny a UI gives when a
// destructive call's allow was not confirmed with ConfirmWord.
const ReasonNotConfirmed = "destructive call not confirmed"

// NoticeKind says what happened to an ask.
type NoticeKind int

const (
	// NoticeAsked: a new ask is pending (or was pending when the UI
	// subscribed).
	NoticeAsked NoticeKind = iota + 1
	// NoticeResolved: the ask ended; Answer says how and by whom.
	NoticeResolved
)

func (k NoticeKind) String() string {
	switch k {
	case NoticeAsked:
		return "asked"
	case NoticeResolved:
		return "resolved"
	}
	return fmt.Sprintf("NoticeKind(%d)", int(k))
}

// Notice tells a subscribed UI about an ask.
type Notice struct {
	Kind    NoticeKind
	Pending Pending
	Answer  executor.Answer // set for NoticeResolved
}

// Options configure a Broker. The zero value is usable.
type Options struct {
	// DefaultTimeout applies when a Question's Timeout is zero (default
	// DefaultTimeout).
	DefaultTimeout time.Duration
	// Remember is how many resolved asks the broker remembers, so that a
	// late answer to one is refused with ErrAlreadyAnswered rather than
	// ErrUnknownAsk (default 1024).
	Remember int
}

// Broker implements executor.Approver for any number of UIs. It is safe for
// concurrent use: Ask, Answer, Deny, Pending and Subscribe may be called from
// any goroutine, and any number of asks may be pending at once.
//
// Time is read with time.Now and timers, so a test in a testing/synctest
// bubble sees a 30-second timeout pass instantly.
type Broker struct {
	opts Options

	mu       sync.Mutex
	seq      uint64
	pending  map[string]*ask // by ID
	resolved map[string]executor.Answer
	order    []string // resolved ids, oldest first, at most opts.Remember
	subs     map[*subscriber]struct{}
	shown    map[string]*ask // asks a UI is showing (Showing), until it has shown how they ended
}

var _ executor.Approver = (*Broker)(nil)

type ask struct {
	Pending
	seq    uint64
	done   chan struct{} // closed once answer is set
	answer executor.Answer
	// showing counts the UIs drawing the ask that have not yet shown how
	// it ended; told is closed when that count falls to 0 after the ask
	// is resolved.
	showing int
	told    chan struct{}
}

// MaxShowWait bounds how long Ask, once its ask is resolved, waits for the
// UIs showing it to say how it ended (Shown): a UI stuck writing to a
// terminal held by flow control does not hold the call for longer.
const MaxShowWait = 250 * time.Millisecond

// Showing tells the broker a UI is drawing the ask id. Once the ask is
// resolved, Ask waits (at most MaxShowWait) until that UI calls Shown,
// having shown how the ask ended, before it returns the answer: the
// outcome a person reads comes before anything the call does after it
// (the tool's output, the model's next words), in whatever order the
// goroutines happen to run. It reports false, and nothing is waited
// for, when the ask is not pending.
func (b *Broker) Showing(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.pending[id]
	if !ok {
		return false
	}
	a.showing++
	if b.shown == nil {
		b.shown = map[string]*ask{}
	}
	b.shown[id] = a
	return true
}

// Shown tells the broker a UI that called Showing for id has shown how
// the ask ended, or stopped showing it.
func (b *Broker) Shown(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.shown[id]
	if !ok || a.showing == 0 {
		return
	}
	if a.showing--; a.showing == 0 {
		delete(b.shown, id)
		if a.told != nil {
			close(a.told)
		}
	}
}

// waitShown waits, after a is resolved, until the UIs showing it have
// shown its outcome, or MaxShowWait.
func (b *Broker) waitShown(a *ask) {
	b.mu.Lock()
	if a.showing == 0 {
		b.mu.Unlock()
		return
	}
	if a.told == nil {
		a.told = make(chan struct{})
	}
	told := a.told
	b.mu.Unlock()
	t := time.NewTimer(MaxShowWait)
	defer t.Stop()
	select {
	case <-told:
	case <-t.C:
	}
}

// New returns a broker. opts may be nil; it is copied.
func New(opts *Options) *Broker {
	b := &Broker{
		pending:  make(map[string]*ask),
		resolved: make(map[string]executor.Answer),
		subs:     make(map[*subscriber]struct{}),
	}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.DefaultTimeout <= 0 {
		b.opts.DefaultTimeout = DefaultTimeout
	}
	if b.opts.Remember <= 0 {
		b.opts.Remember = 1024
	}
	return b
}

// Ask registers q as pending, tells every subscribed UI, and waits for the
// first answer. Without an answer by the deadline (q.Timeout, or the
// default) it returns a deny by the system with reason "timeout: no answer
// within 30s". If ctx ends first it returns a deny by the system with
// ReasonCancelled and ctx.Err(), unless an answer had already won. The
// returned error is otherwise nil.
//
// q.Options nil means executor.OfferedOptions(q.Decision). Deny is always
// offered, even if q.Options omits it.
func (b *Broker) Ask(ctx context.Context, q executor.Question) (executor.Answer, error) {
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = b.opts.DefaultTimeout
	}
	a := &ask{done: make(chan struct{})}
	a.Question = q
	if err := ctx.Err(); err != nil {
		// Nobody could have seen it: resolve without announcing.
		return executor.Answer{Actor: event.ActorSystem, Reason: ReasonCancelled}, err
	}

	b.mu.Lock()
	b.seq++
	a.seq = b.seq
	a.ID = fmt.Sprintf("ask-%d", b.seq)
	a.Options = offered(a.Pending)
	a.Asked = time.Now()
	forever := timeout >= executor.NoApprovalTimeout
	if !forever {
		a.Deadline = a.Asked.Add(timeout)
	}
	b.pending[a.ID] = a
	b.notifyLocked(Notice{Kind: NoticeAsked, Pending: a.Pending})
	b.mu.Unlock()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	if forever {
		timer.Stop() // never fires: only an answer or ctx ends the ask
	}
	defer b.waitShown(a)
	select {
	case <-a.done:
		return a.answer, nil
	case <-timer.C:
		won, _ := b.resolve(a, executor.Answer{
			Actor:  event.ActorSystem,
			Reason: fmt.Sprintf("timeout: no answer within %s", timeout),
		})
		return won, nil
	case <-ctx.Done():
		won, ours := b.resolve(a, executor.Answer{Actor: event.ActorSystem, Reason: ReasonCancelled})
		if ours {
			return won, ctx.Err()
		}
		return won, nil
	}
}

// offered returns the ask's options: the question's, or the default set
// for its decision, with deny always present and, for a destructive (or
// unknown-risk) call, nothing but allow once (with or without the sandbox)
// and deny.
func offered(p Pending) []string {
	opts := p.Question.Options
	if opts == nil {
		opts = executor.OfferedOptions(p.Question.Decision, p.Question.SessionRule != nil, p.Question.ProjectRule != nil)
	}
	out := make([]string, 0, len(opts)+1)
	for _, o := range opts {
		if slices.Contains(out, o) {
			continue
		}
		if p.Destructive() && o != executor.OptionAllowOnce && o != executor.OptionAllowUnsandboxed && o != executor.OptionDeny {
			continue
		}
		out = append(out, o)
	}
	if !slices.Contains(out, executor.OptionDeny) {
		out = append(out, executor.OptionDeny)
	}
	return out
}

// Answer resolves the ask id with one of its options on behalf of actor
// (event.ActorUser when empty). It returns ErrUnknownAsk,
// ErrAlreadyAnswered (another answer won) or ErrNotOffered, wrapped with
// detail; nil means this answer won.
func (b *Broker) Answer(id, option string, actor event.Actor) error {
	return b.AnswerVia(id, option, actor, "")
}

// AnswerVia is Answer from the approval UI named ui ("terminal", "stdin",
// "acp", "web" …), which permission.resolved records.
func (b *Broker) AnswerVia(id, option string, actor event.Actor, ui string) error {
	if actor == "" {
		actor = event.ActorUser
	}
	ans := executor.Answer{Allow: option != executor.OptionDeny, Option: option, Actor: actor, UI: ui}
	if ans.Allow {
		ans.Reason = string(actor) + " approved (" + option + ")"
	} else {
		ans.Reason = string(actor) + " denied"
	}
	return b.answer(id, ans, true)
}

// Deny resolves the ask id as denied, with the given actor (event.ActorUser
// when empty) and reason: for a UI that must say why, such as "approval
// input closed" or "destructive call not confirmed". Deny is always
// offered. Errors are as for Answer.
func (b *Broker) Deny(id string, actor event.Actor, reason string) error {
	return b.DenyVia(id, actor, "", reason)
}

// DenyVia is Deny from the approval UI named ui (see AnswerVia).
func (b *Broker) DenyVia(id string, actor event.Actor, ui, reason string) error {
	if actor == "" {
		actor = event.ActorUser
	}
	if reason == "" {
		reason = string(actor) + " denied"
	}
	return b.answer(id, executor.Answer{Option: executor.OptionDeny, Actor: actor, Reason: reason, UI: ui}, false)
}

func (b *Broker) answer(id string, ans executor.Answer, checkOffered bool) error {
	b.mu.Lock()
	a, ok := b.pending[id]
	if !ok {
		prev, done := b.resolved[id]
		b.mu.Unlock()
		if done {
			return fmt.Errorf("%s: %w (%s by %s)", id, ErrAlreadyAnswered, describe(prev), prev.Actor)
		}
		return fmt.Errorf("%s: %w", id, ErrUnknownAsk)
	}
	if checkOffered && !slices.Contains(a.Options, ans.Option) {
		b.mu.Unlock()
		return fmt.Errorf("%s: %w: %q (offered: %v)", id, ErrNotOffered, ans.Option, a.Options)
	}
	b.resolveLocked(a, ans)
	b.mu.Unlock()
	return nil
}

// resolve ends a with ans unless another answer won first, and returns the
// answer that won and whether it is ans.
func (b *Broker) resolve(a *ask, ans executor.Answer) (won executor.Answer, ours bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[a.ID]; ok {
		b.resolveLocked(a, ans)
		return ans, true
	}
	return a.answer, false
}

func (b *Broker) resolveLocked(a *ask, ans executor.Answer) {
	a.answer = ans
	close(a.done)
	delete(b.pending, a.ID)
	b.resolved[a.ID] = ans
	b.order = append(b.order, a.ID)
	if len(b.order) > b.opts.Remember {
		delete(b.resolved, b.order[0])
		b.order = slices.Delete(b.order, 0, 1)
	}
	b.notifyLocked(Notice{Kind: NoticeResolved, Pending: a.Pending, Answer: ans})
}

func describe(a executor.Answer) string {
	if a.Allow {
		return "allowed (" + a.Option + ")"
	}
	return "denied: " + a.Reason
}

// Pending returns the asks waiting for an answer, oldest first.
func (b *Broker) Pending() []Pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pendingLocked()
}

func (b *Broker) pendingLocked() []Pending {
	asks := make([]*ask, 0, len(b.pending))
	for _, a := range b.pending {
		asks = append(asks, a)
	}
	slices.SortFunc(asks, func(x, y *ask) int { return cmp.Compare(x.seq, y.seq) })
	out := make([]Pending, len(asks))
	for i, a := range asks {
		out[i] = a.Pending
	}
	return out
}

// Subscribe returns a feed of notices for a UI: first a NoticeAsked for
// each ask already pending, oldest first, then every notice as it happens,
// in the order the broker made them. The channel is closed after ctx ends;
// notices still queued then are dropped. A subscriber that stops reading
// without ending ctx holds its queue in memory.
func (b *Broker) Subscribe(ctx context.Context) <-chan Notice {
	s := &subscriber{wake: make(chan struct{}, 1)}
	out := make(chan Notice)
	b.mu.Lock()
	for _, p := range b.pendingLocked() {
		s.push(Notice{Kind: NoticeAsked, Pending: p})
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()

	go func() {
		defer close(out)
		defer func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
		}()
		for {
			n, ok := s.pop()
			if !ok {
				select {
				case <-s.wake:
					continue
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- n:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// notifyLocked queues n for every subscriber; b.mu is held, so all
// subscribers see notices in the same order.
func (b *Broker) notifyLocked(n Notice) {
	for s := range b.subs {
		s.push(n)
	}
}

// subscriber is one UI's unbounded queue.
type subscriber struct {
	mu    sync.Mutex
	queue []Notice
	wake  chan struct{} // capacity 1: "the queue may be non-empty"
}

func (s *subscriber) push(n Notice) {
	s.mu.Lock()
	s.queue = append(s.queue, n)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) pop() (Notice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Notice{}, false
	}
	n := s.queue[0]
	s.queue[0] = Notice{}
	s.queue = s.queue[1:]
	return n, true
}
