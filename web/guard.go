package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"html"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The four checks every request passes, each on its own (so that a flaw in
// one is not a hole):
//
//  1. Host: the Host header is one of an exact list (the random UI host
//     LABEL.localhost:PORT, 127.0.0.1:PORT, localhost:PORT, [::1]:PORT and
//     the names given), so a page whose DNS name was rebound to 127.0.0.1
//     is refused before anything else.
//  2. Token: every request but GET /healthz (which answers 204 and nothing
//     else) is authenticated, by one of two means:
//     - the cookie AND the tab key, accepted only with the exact UI host.
//     The URL serve prints carries a single-use token that expires if
//     unused (Options.TokenTTL); its first use sets the cookie (host-only,
//     so the browser sends it to that random name only, never to
//     127.0.0.1 or localhost) and gives the page a tab key, in the body of
//     that one response, never in a URL. The page keeps the key in
//     sessionStorage (origin-scoped: scheme, host AND port) and sends it
//     as the header X-Custom-Agent-Key on every request it makes (fetch,
//     and the event streams, read with fetch since EventSource sends no
//     header). A cookie alone is worth nothing: cookies ignore ports, so
//     a program listening on another port of the random host gets the
//     cookie when the browser is sent there, but never the key. With the
//     cookie alone the guard serves only the embedded, data-free assets
//     and, for a page, a data-free loader (status 401) whose script
//     fetches the page again with the key.
//     - Authorization: Bearer with the script token (from a 0600 file, never
//     in a URL), on any allowed Host.
//  3. Origin: a request that changes state carries an Origin header equal to
//     http://HOST for its own allowed Host; any request carrying an Origin
//     other than that is refused too.
//  4. Non-simple: a request that changes state is a POST with
//     Content-Type: application/json and the header X-Custom-Agent: 1,
//     which no cross-origin form, image or simple fetch can send without
//     a CORS preflight, and the server answers no preflight.
//
// No response carries a CORS header.

// HeaderCSRF is the custom header a state-changing request must carry.
const HeaderCSRF = "X-Custom-Agent"

// maxBody bounds a state-changing request's body.
const maxBody = 64 << 10

// CSP is the Content-Security-Policy of every response: scripts and styles
// only from this server's files (no inline script, no eval), images only
// from here (a markdown image in model text never loads), no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// CookieName is the name of the session cookie. It is host-only: set by
// the random UI host (Options.UIHost) and accepted only there.
const CookieName = "custom-agent"

// HeaderKey is the header that carries a tab's key, beside the cookie.
const HeaderKey = "X-Custom-Agent-Key"

// maxKeys bounds the tab keys kept: one is made per login link used.
const maxKeys = 64

// guard wraps the application's handler with the four checks.
type guard struct {
	mu          sync.Mutex
	urlToken    string          // single-use: "" once exchanged for the cookie
	tokenExpiry time.Time       // the URL token is refused after this
	keys        []string        // tab keys given out, oldest first
	scriptToken string          // long-lived Bearer token for scripts ("" turns Bearer off)
	uiHost      string          // the one Host a cookie is accepted on (lower case)
	cookieValue string          // random, not a token
	hosts       map[string]bool // exact Host values
	now         func() time.Time
	next        http.Handler
}

func newGuard(urlToken string, expiry time.Time, scriptToken, uiHost string, hosts []string, now func() time.Time, next http.Handler) *guard {
	g := &guard{
		urlToken:    urlToken,
		tokenExpiry: expiry,
		scriptToken: scriptToken,
		uiHost:      strings.ToLower(uiHost),
		cookieValue: randomHex(32),
		hosts:       map[string]bool{strings.ToLower(uiHost): true},
		now:         now,
		next:        next,
	}
	for _, h := range hosts {
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("web: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// NewToken returns a fresh 256-bit token.
func NewToken() string { return randomHex(32) }

// NewHostLabel returns a fresh 128-bit DNS label for the UI host
// (LABEL.localhost:PORT): the cookie is host-only to a name no other
// listener is asked for unless it is told the name.
func NewHostLabel() string { return randomHex(16) }

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// refuse answers a request the guard does not let through.
func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// turnAway refuses a request made before it authenticated (a wrong Host or
// Origin, no or a wrong token or key), and closes its connection: an
// unauthenticated client must not hold one of the MaxConns connections
// idle for IdleTimeout, or enough of them shut the page and its
// questions out.
func turnAway(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Connection", "close")
	refuse(w, code, msg)
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	// 1. Host, before anything else (DNS rebinding).
	if !g.hosts[strings.ToLower(r.Host)] {
		turnAway(w, http.StatusMisdirectedRequest, "this server answers only to its own address (Host not allowed)")
		return
	}
	// The health check: no token, no data.
	if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// 3, for every request: an Origin, when sent, is our own.
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin && (len(origin) != 1 || origin[0] != "http://"+r.Host) {
		turnAway(w, http.StatusForbidden, "cross-origin request refused (Origin is not this server)")
		return
	}
	// 2. The token: the URL serve printed sets the cookie, once.
	if r.Method == http.MethodGet && r.URL.Query().Has("token") {
		g.exchange(w, r)
		return
	}
	switch {
	case g.bearerOK(r):
	case g.cookieOK(r):
		if g.keyOK(r) {
			break
		}
		// The cookie alone (which a program on another port of this host
		// may have been sent): the data-free assets, or for a page the
		// loader that asks again with this tab's key.
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if strings.HasPrefix(r.URL.Path, "/assets/") {
				g.next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(loaderPage))
			return
		}
		turnAway(w, http.StatusUnauthorized, "this tab's key is required (header "+HeaderKey+"): reload the page, or open a fresh link from custom-agent serve")
		return
	default:
		turnAway(w, http.StatusUnauthorized, "token required: open the URL custom-agent serve printed")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, HEAD, POST")
			refuse(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		// 3. A state change names its origin, and it is ours.
		if !hasOrigin {
			refuse(w, http.StatusForbidden, "a request that changes anything must carry an Origin header")
			return
		}
		// 4. Only a request no cross-origin page can make without a
		// preflight.
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			refuse(w, http.StatusUnsupportedMediaType, "a request that changes anything must be Content-Type: application/json")
			return
		}
		if r.Header.Get(HeaderCSRF) != "1" {
			refuse(w, http.StatusForbidden, "a request that changes anything must carry the header "+HeaderCSRF+": 1")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) equal(got, want string) bool {
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// exchange trades the single-use URL token for the cookie and a tab key,
// on the UI host only. The answer is a page holding the key in an
// attribute (never in a URL), whose script keeps it in sessionStorage and
// loads the page asked for, without the token.
func (g *guard) exchange(w http.ResponseWriter, r *http.Request) {
	if strings.ToLower(r.Host) != g.uiHost {
		turnAway(w, http.StatusMisdirectedRequest, "open the URL exactly as custom-agent serve printed it (http://"+g.uiHost+"/...)")
		return
	}
	q := r.URL.Query()
	got := q.Get("token")
	q.Del("token")
	// Only a path of this server: "//evil.example" or "/\\evil.example"
	// would be read as another host.
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		p = "/"
	}
	to := (&url.URL{Path: p, RawQuery: q.Encode()}).String()

	g.mu.Lock()
	ok := g.urlToken != "" && g.equal(got, g.urlToken)
	expired := ok && !g.now().Before(g.tokenExpiry)
	var key string
	if ok {
		g.urlToken = "" // single-use: a copy in the browser's history is worth nothing
		if !expired {
			key = randomHex(32)
			g.keys = append(g.keys, key)
			if len(g.keys) > maxKeys {
				g.keys = g.keys[len(g.keys)-maxKeys:]
			}
		}
	}
	g.mu.Unlock()
	switch {
	case expired:
		turnAway(w, http.StatusUnauthorized, "this link has expired (a link works for a limited time if unused): ask custom-agent serve for a fresh one (see its output)")
		return
	case !ok && g.cookieOK(r):
		// A used link in a browser that has the cookie: on to the page
		// (its tab key, if it has one, is in its sessionStorage).
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	case !ok:
		turnAway(w, http.StatusUnauthorized, "wrong or already used token: the URL custom-agent serve printed works once; ask serve for a fresh one (see its output)")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: g.cookieValue, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(strings.NewReplacer("{{KEY}}", key, "{{NEXT}}", html.EscapeString(to)).Replace(exchangePage)))
}

func (g *guard) expiry() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokenExpiry
}

// newLink replaces the URL token with a fresh one that expires at expiry.
func (g *guard) newLink(token string, expiry time.Time) {
	g.mu.Lock()
	g.urlToken, g.tokenExpiry = token, expiry
	g.mu.Unlock()
}

// exchangePage is the answer to the login link: it holds the tab key.
const exchangePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>custom-agent</title>
<link rel="stylesheet" href="/assets/app.css"><script src="/assets/boot.js" defer></script></head>
<body><div id="ca-exchange" data-key="{{KEY}}" data-next="{{NEXT}}"></div>
<p id="ca-message">Signing in…</p><noscript>custom-agent serve needs JavaScript.</noscript></body></html>
`

// loaderPage is what a page request with the cookie but no tab key gets
// (status 401): no data, only the script that asks again with the key.
const loaderPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>custom-agent</title>
<link rel="stylesheet" href="/assets/app.css"><script src="/assets/boot.js" defer></script></head>
<body><div id="ca-boot"></div>
<p id="ca-message">Loading…</p><noscript>custom-agent serve needs JavaScript.</noscript></body></html>
`

// cookieOK reports whether r is on the UI host and carries the cookie. Any
// of several cookies of that name may match (another may have been tossed
// in with a longer path).
func (g *guard) cookieOK(r *http.Request) bool {
	if strings.ToLower(r.Host) != g.uiHost {
		return false
	}
	for _, c := range r.CookiesNamed(CookieName) {
		if g.equal(c.Value, g.cookieValue) {
			return true
		}
	}
	return false
}

// keyOK reports whether r carries a tab key this server gave out.
func (g *guard) keyOK(r *http.Request) bool {
	got := r.Header.Get(HeaderKey)
	if len(got) != 64 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	ok := false
	for _, k := range g.keys {
		if g.equal(got, k) {
			ok = true
		}
	}
	return ok
}

// bearerOK reports whether r carries the script token.
func (g *guard) bearerOK(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); g.scriptToken != "" && strings.HasPrefix(a, "Bearer ") {
		return g.equal(strings.TrimPrefix(a, "Bearer "), g.scriptToken)
	}
	return false
}
