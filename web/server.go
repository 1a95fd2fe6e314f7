// Package web is the browser approval UI and audit view of custom-agent
// (custom-agent serve): the sessions of the event log, one queue of every
// question waiting for an answer from any process, the approval dialog, and
// each session's live timeline.
//
// The log is the one source of truth: pages are folded from it (Index),
// and an answer is handed to the store (Inbox) for the asking process to
// take and record; the server then watches the log for the
// permission.resolved that says whether the answer won. A prompt from the
// browser starts a turn in the server's own process (Turns), whose
// questions are answered the same way.
//
// Security: see guard.go. Every page is rendered by html/template; the one
// script (assets/app.js) builds the live parts with textContent only, so
// text from a model, a tool or a repository is never markup.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/eventlog"
)

//go:embed assets templates
var files embed.FS

// Answer is an answer from a UI to an ask, as handed to the store.
type Answer = eventlog.Answer

// Inbox is the part of eventlog.Inbox the web uses: it carries answers from
// the browser to the process that asked, through the store. OfferAnswer
// returns an error wrapping eventlog.ErrAnswered when an answer to that ask
// is already there.
type Inbox interface {
	OfferAnswer(ctx context.Context, a Answer) error
}

var _ Inbox = eventlog.Inbox(nil)

// Artifacts opens stored tool outputs; *artifact.Store satisfies it.
type Artifacts interface {
	Open(digest string) (*artifact.Blob, error)
}

var _ Artifacts = (*artifact.Store)(nil)

// UIName is what the web records as the UI that answered.
const UIName = "web"

// Options configure a Server. Log and Token are required.
type Options struct {
	Log eventlog.Store
	// Inbox carries answers; nil turns answering off (the dialog says so).
	Inbox Inbox
	// Policy feeds the policy page; nil turns it off.
	Policy Policy
	// Turns starts and cancels turns in this process; nil turns the
	// prompt forms off.
	Turns Turns
	// Artifacts serves tool outputs for download; nil turns that off.
	Artifacts Artifacts
	// Token is the per-run, single-use secret of the printed URL
	// (NewToken): its first use sets the cookie and burns it.
	Token string
	// TokenTTL is how long Token (and each NewLink token) stays usable if
	// nobody opens it (default DefaultTokenTTL).
	TokenTTL time.Duration
	// ScriptToken is the long-lived Bearer token for scripts (NewToken),
	// never put in a URL; empty turns Bearer authentication off.
	ScriptToken string
	// UIHost is the browser's Host, LABEL.localhost:PORT (NewHostLabel): the
	// only Host on which the token URL and the cookie are accepted.
	UIHost string
	// Hosts are the other exact Host header values served (Bearer only).
	Hosts []string
	// Poll is how often the log is read for appends by other processes
	// (default eventlog.DefaultPollInterval).
	Poll time.Duration
	// AnswerWait bounds how long an answer waits for the asking process to
	// record its outcome (default 10 s).
	AnswerWait time.Duration
	// ReadFile reads a file for a write_file diff; nil means
	// cli.ReadCurrentFile (regular files only, bounded: a FIFO or
	// /dev/zero must not hang or grow the dialog).
	ReadFile func(string) ([]byte, error)
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// DefaultTokenTTL is how long a login link works if unused.
const DefaultTokenTTL = 10 * time.Minute

// Server is the web UI. Its handler may serve any number of requests at
// once.
type Server struct {
	opts  Options
	index *Index
	tmpl  *template.Template
	h     http.Handler
	g     *guard
}

// New returns a server; call Run to follow the log.
func New(opts Options) (*Server, error) {
	if opts.Log == nil || len(opts.Token) < 32 || opts.UIHost == "" {
		return nil, errors.New("web: a log, a UI host and a token of at least 32 characters are required")
	}
	if opts.ScriptToken != "" && (len(opts.ScriptToken) < 32 || opts.ScriptToken == opts.Token) {
		return nil, errors.New("web: the script token must have at least 32 characters and differ from the URL token")
	}
	if opts.AnswerWait <= 0 {
		opts.AnswerWait = 10 * time.Second
	}
	if opts.ReadFile == nil {
		opts.ReadFile = cli.ReadCurrentFile
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, index: NewIndex(opts.Log, opts.Poll)}
	s.index.logger = opts.Logger
	t, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s.tmpl = t
	s.g = newGuard(opts.Token, opts.Now().Add(opts.TokenTTL), opts.ScriptToken, opts.UIHost, opts.Hosts, opts.Now, s.routes())
	s.h = s.g
	return s, nil
}

// TokenExpiry is when the first login link (Options.Token) stops working
// if unused.
func (s *Server) TokenExpiry() time.Time { return s.g.expiry() }

// NewLink makes a fresh single-use login token, valid for TokenTTL, in
// place of any unused one, and returns it with its expiry. Browsers already
// signed in keep working.
func (s *Server) NewLink() (token string, expires time.Time) {
	token = NewToken()
	expires = s.opts.Now().Add(s.opts.TokenTTL)
	s.g.newLink(token, expires)
	return token, expires
}

// Handler is the whole site, behind the guard.
func (s *Server) Handler() http.Handler { return s.h }

// Index is the server's view of the log.
func (s *Server) Index() *Index { return s.index }

// Run follows the log until ctx ends.
func (s *Server) Run(ctx context.Context) error { return s.index.Run(ctx) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(files, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /{$}", s.sessionsPage)
	mux.HandleFunc("GET /queue", s.queuePage)
	mux.HandleFunc("GET /queue/events", s.queueEvents)
	mux.HandleFunc("GET /session/{id}", s.sessionPage)
	mux.HandleFunc("GET /session/{id}/events", s.timelineEvents)
	mux.HandleFunc("GET /session/{id}/ask/{seq}", s.askPage)
	mux.HandleFunc("GET /session/{id}/output/{seq}/{name}", s.inEventOutput)
	mux.HandleFunc("GET /artifact/{digest}", s.artifactDownload)
	mux.HandleFunc("POST /api/answer", s.answer)
	mux.HandleFunc("GET /policy", s.policyPage)
	mux.HandleFunc("POST /api/explain", s.explain)
	mux.HandleFunc("POST /api/turn", s.startTurn)
	mux.HandleFunc("POST /api/cancel", s.cancelTurn)
	mux.HandleFunc("POST /api/revoke", s.revokeRule)
	mux.HandleFunc("POST /api/revoke-approval", s.revokeApproval)
	return mux
}
