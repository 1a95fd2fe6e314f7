package approval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// Defaults of RelayOptions.
const (
	DefaultRelayInterval = 25 * time.Millisecond
	DefaultRelayPerTick  = 32
)

// RelayOptions tune Relay. The zero value is the default.
type RelayOptions struct {
	// Interval is how often the inbox is looked at while the broker has
	// asks of the session pending (default DefaultRelayInterval). Nothing
	// is looked at while none is pending.
	Interval time.Duration
	// PerTick bounds how many pending asks are looked up in the inbox
	// per look (default DefaultRelayPerTick); the others wait for the
	// next, in turn.
	PerTick int
	// Logger gets a line for each answer refused and for inbox errors
	// (default slog.Default()).
	Logger *slog.Logger
}

// Relay answers the broker's asks of session sessionID ("" for every
// session the broker asks about) with the answers that UIs of other
// processes (the web UI, `custom-agent serve`) offer in inbox. It is run by
// the process that asks, for as long as its asks may be answered
// elsewhere, and returns nil when ctx ends.
//
// While the broker has asks of the session pending, Relay looks in the
// inbox every Interval for an answer to each (session, tool call id, seq of
// its open permission.requested, read from the log). An
// answer resolves the ask it names through the broker, with actor user and
// the answer's UI: the executor then records permission.resolved as for
// any other answer. The first answer wins, from whichever UI (the broker
// resolves an ask once); an answer to an ask already resolved (by the
// terminal, a timeout or a cancellation) changes nothing. An answer is
// taken only for the question it names:
//   - the log must hold exactly one open permission.requested with the
//     ask's tool call id, and the broker exactly one pending ask with it;
//   - the answer names that request's seq (RequestSeq): an answer to an
//     earlier question with a reused tool call id is never taken.
//
// Otherwise the answer is ignored and logged, and the ask is left to the
// other UIs and its timeout. An answer naming an option the ask does not
// offer, or allowing a destructive call without the confirmation the
// terminal demands (Confirmed), denies the ask, as the terminal does.
func Relay(ctx context.Context, inbox eventlog.Inbox, log Reader, b *Broker, sessionID string, opts *RelayOptions) error {
	r := &relay{inbox: inbox, log: log, b: b, session: sessionID, pending: map[string]Pending{}, done: map[string]bool{},
		seqs: map[string]uint64{}, scans: map[string]*scan{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Interval <= 0 {
		r.opts.Interval = DefaultRelayInterval
	}
	if r.opts.PerTick <= 0 {
		r.opts.PerTick = DefaultRelayPerTick
	}
	if r.opts.Logger == nil {
		r.opts.Logger = slog.Default()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	notes := b.Subscribe(ctx)
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		var tick <-chan time.Time
		switch {
		case len(r.pending) > 0 && ticker == nil:
			ticker = time.NewTicker(r.opts.Interval)
		case len(r.pending) == 0 && ticker != nil:
			ticker.Stop()
			ticker = nil
		}
		if ticker != nil {
			tick = ticker.C
		}
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-notes:
			if !ok {
				return nil
			}
			r.notice(n)
		case <-tick:
			r.look(ctx)
		}
	}
}

type relay struct {
	inbox   eventlog.Inbox
	log     Reader
	b       *Broker
	session string
	opts    RelayOptions

	pending map[string]Pending // the session's asks pending, by ask id
	done    map[string]bool    // asks whose answer was handled or refused
	seqs    map[string]uint64  // the seq of each pending ask's permission.requested, once read
	scans   map[string]*scan   // the log read so far, by session with asks pending
	next    int                // where the next look starts, for PerTick
	failing bool               // the last look failed (said once, until one works)
	unread  bool               // the log could not be read to match an answer (said once, likewise)
}

func (r *relay) notice(n Notice) {
	if r.session != "" && n.Pending.Question.SessionID != r.session {
		return // another session's ask: its answers are not this relay's
	}
	switch n.Kind {
	case NoticeAsked:
		r.pending[n.Pending.ID] = n.Pending
	case NoticeResolved:
		delete(r.pending, n.Pending.ID)
		delete(r.done, n.Pending.ID)
		delete(r.seqs, n.Pending.ID)
		sid := n.Pending.Question.SessionID
		for _, p := range r.pending {
			if p.Question.SessionID == sid {
				return
			}
		}
		delete(r.scans, sid) // read again from the start for a later ask
	}
}

// scan is how far the relay read a session's log, and its open questions.
type scan struct {
	next uint64              // the next seq to read
	open map[string][]uint64 // by tool call id: the seqs of its open permission.requested
}

// requestSeq returns the seq of p's permission.requested: the one open
// question of its tool call id in the log (0 while there is not exactly
// one, e.g. before the request is read). It reads only what is new since the
// last call for the session.
func (r *relay) requestSeq(ctx context.Context, p Pending) (uint64, error) {
	if seq, ok := r.seqs[p.ID]; ok {
		return seq, nil
	}
	sid := p.Question.SessionID
	sc := r.scans[sid]
	if sc == nil {
		sc = &scan{next: 1, open: map[string][]uint64{}}
		r.scans[sid] = sc
	}
	for e, err := range r.log.Read(ctx, sid, sc.next) {
		if err != nil {
			return 0, err
		}
		sc.next = e.Seq + 1
		if e.Type != event.PermissionRequested && e.Type != event.PermissionResolved {
			continue
		}
		d, err := e.Decode()
		if err != nil {
			return 0, err
		}
		switch d := d.(type) {
		case *event.PermissionRequestedPayload:
			sc.open[d.ToolCallID] = append(sc.open[d.ToolCallID], e.Seq)
		case *event.PermissionResolvedPayload:
			if o := sc.open[d.ToolCallID]; len(o) > 0 {
				sc.open[d.ToolCallID] = o[:len(o)-1]
			}
		}
	}
	if o := sc.open[p.Question.ToolCallID]; len(o) == 1 {
		r.seqs[p.ID] = o[0]
		return o[0], nil
	}
	return 0, nil
}

// look takes, for at most PerTick pending asks, the answer offered to each.
func (r *relay) look(ctx context.Context) {
	asks := make([]Pending, 0, len(r.pending))
	for id, p := range r.pending {
		if !r.done[id] {
			asks = append(asks, p)
		}
	}
	if len(asks) == 0 {
		return
	}
	slices.SortFunc(asks, func(x, y Pending) int { return cmp.Or(x.Asked.Compare(y.Asked), cmp.Compare(x.ID, y.ID)) })
	n := min(len(asks), r.opts.PerTick)
	start := r.next % len(asks)
	r.next = start + n
	for i := range n {
		p := asks[(start+i)%len(asks)]
		seq, err := r.requestSeq(ctx, p)
		if err != nil || seq == 0 {
			if err != nil && ctx.Err() == nil && !r.unread {
				r.opts.Logger.Warn("approval relay: the log could not be read to find the question; trying again", "session", p.Question.SessionID, "toolCallId", p.Question.ToolCallID, "err", err)
				r.unread = true
			}
			continue // not (yet) one open question in the log: no answer can be for it
		}
		a, ok, err := r.inbox.TakeAnswer(ctx, p.Question.SessionID, p.Question.ToolCallID, seq)
		if err != nil {
			if ctx.Err() == nil && !r.failing {
				r.opts.Logger.Warn("approval relay: reading the inbox failed; trying again", "session", p.Question.SessionID, "toolCallId", p.Question.ToolCallID, "err", err)
			}
			r.failing = true
			return
		}
		r.failing = false
		if ok {
			// Handled once, whatever the outcome, unless the log could
			// not be read to match it.
			r.done[p.ID] = r.take(ctx, p, a)
		}
	}
}

// take resolves p with a, when a is an answer to p. It reports false when
// that could not be told (the log could not be read): the answer is then
// looked at again.
func (r *relay) take(ctx context.Context, p Pending, a eventlog.Answer) bool {
	ui := UIName(a.UI)
	lg := r.opts.Logger.With("session", p.Question.SessionID, "toolCallId", p.Question.ToolCallID, "ask", p.ID, "ui", ui)
	if why, err := r.names(ctx, p, a); err != nil {
		if ctx.Err() == nil && !r.unread {
			lg.Warn("approval relay: the log could not be read to match an answer; trying again", "err", err)
		}
		r.unread = true
		return false
	} else if why != "" {
		lg.Warn("approval relay: an offered answer is not for this question; ignored", "why", why)
		return true
	}
	r.unread = false
	var err error
	switch {
	case !slices.Contains(p.Options, a.Option):
		err = r.b.DenyVia(p.ID, event.ActorSystem, ui,
			fmt.Sprintf("the %s UI answered %q, which was not offered for this call; denied", ui, clip(a.Option)))
	case NeedsConfirm(p, a.Option) && !Confirmed(a.Confirm):
		err = r.b.DenyVia(p.ID, event.ActorUser, ui, ReasonNotConfirmed)
	default:
		err = r.b.AnswerVia(p.ID, a.Option, event.ActorUser, ui)
	}
	switch {
	case errors.Is(err, ErrAlreadyAnswered), errors.Is(err, ErrUnknownAsk):
		lg.Info("approval relay: the question was answered first elsewhere; the offered answer changes nothing", "err", err)
	case err != nil:
		lg.Warn("approval relay: answer refused", "err", err)
	}
	return true
}

// names reports why a is not an answer to p ("" when it is), from the log:
// the answer must name the one open request of p's tool call id.
func (r *relay) names(ctx context.Context, p Pending, a eventlog.Answer) (string, error) {
	same := 0
	for _, q := range r.pending {
		if q.Question.SessionID == p.Question.SessionID && q.Question.ToolCallID == p.Question.ToolCallID {
			same++
		}
	}
	if same != 1 {
		return fmt.Sprintf("%d asks with this tool call id are pending", same), nil
	}
	// An answer naming its request is matched from that request on: the
	// request must be there, with this id, and nothing after it may
	// have resolved it or asked again with the id. (A request of the id
	// before it still open would be another pending ask of this
	// process, refused above, or one a dead process left, which
	// RecoverPending closed.) One naming none is matched against the
	// whole session.
	from := uint64(1)
	if a.RequestSeq != 0 {
		from = a.RequestSeq
	}
	var open []uint64
	total := 0
	for e, err := range r.log.Read(ctx, p.Question.SessionID, from) {
		if err != nil {
			return "", err
		}
		if e.Type != event.PermissionRequested && e.Type != event.PermissionResolved {
			continue
		}
		d, err := e.Decode()
		if err != nil {
			return "", err
		}
		switch d := d.(type) {
		case *event.PermissionRequestedPayload:
			if d.ToolCallID == p.Question.ToolCallID {
				open = append(open, e.Seq)
				total++
			}
		case *event.PermissionResolvedPayload:
			if d.ToolCallID == p.Question.ToolCallID && len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	switch {
	case len(open) != 1:
		return fmt.Sprintf("the log holds %d open questions with this tool call id", len(open)), nil
	case a.RequestSeq != 0 && a.RequestSeq != open[0]:
		return fmt.Sprintf("the answer is to the question at seq %d, the open one is at seq %d", a.RequestSeq, open[0]), nil
	case a.RequestSeq == 0 && total != 1:
		return fmt.Sprintf("the answer names no request seq and the log holds %d questions with this tool call id", total), nil
	}
	return "", nil
}

// UIName is the name of a UI as recorded in permission.resolved's ui: the
// name an answer gave, when it is a short word of lower-case letters,
// digits and '-' (the text comes from another process), else "other".
func UIName(name string) string {
	if name == "" || len(name) > 32 {
		return "other"
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return "other"
		}
	}
	return name
}

// clip shortens text from another process for a reason.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
