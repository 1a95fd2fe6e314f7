// Package secrets finds and masks secret material (API keys, tokens,
// passwords, private keys) in text before it reaches the event log or a
// model. It is pure and runs in time linear in its input (RE2 regular
// expressions only).
//
// Masking is a second line of defence: what a tool printed is kept whole in
// the artifact store; the log and the model get the masked form.
package secrets

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces each secret.
const Redacted = "[REDACTED]"

// Match is one secret found in a string: the byte range [Start, End) to
// hide, and what it looks like.
type Match struct {
	Start, End int
	Kind       string
	// keyed: found by the key name before it (password=…), not by its
	// own look.
	keyed bool
}

type pattern struct {
	kind string
	// re is compiled on its first use: a text that holds none of a
	// pattern's literals (need) never compiles it, so a short-lived
	// process (a hook) pays only for the patterns its text could match.
	re func() *regexp.Regexp
	// group is the submatch to hide; 0 hides the whole match.
	group int
	// need are literals at least one of which is in every text re
	// matches: a text holding none of them is not searched (the search
	// was most of a tool call's CPU for a long output). With fold, re is
	// case-insensitive, the literals are lower-case ASCII and are looked
	// for in foldASCII of the text.
	need []string
	fold bool
	// scan: the submatch is the value's first byte and valueEnd finds
	// its end; groups 1 and 2 are the blanks before and after the
	// separator. Otherwise a submatch is cut where valueEnd says the
	// value ends.
	scan bool
	// block: a private key from its BEGIN line; blockEnd cuts it where
	// a key's body cannot go on.
	block bool
}

// could reports whether p may match s; folded returns foldASCII(s).
func (p *pattern) could(s string, folded func() string) bool {
	if len(p.need) == 0 || !prefilter {
		return true
	}
	t := s
	if p.fold {
		t = folded()
	}
	for _, n := range p.need {
		if strings.Contains(t, n) {
			return true
		}
	}
	return false
}

// foldASCII maps every rune that (?i) matches with an ASCII letter to that
// letter in lower case: A-Z, and the only two others Unicode folds onto
// ASCII, the Kelvin sign (k) and the long s (s). TestFoldASCIIIsComplete
// checks there are no more.
func foldASCII(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		case r == '\u212a':
			return 'k'
		case r == '\u017f':
			return 's'
		}
		return r
	}, s)
}

// prefilter is off only in the test that compares Find with and without
// it.
var prefilter = true

// The patterns, most specific first. Key names are matched on whole words
// so that "monkey=banana" or "tokenizer=bpe" stay visible. They are
// compiled on first use, not at every start of the binary (a one-shot
// check or a hook never masks anything).
var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// PRIVATE, and SECRET for PGP 2's "SECRET KEY BLOCK".
		{"private key", lazy(`-----BEGIN[ A-Z0-9]*(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----|\z)`), 0, []string{"-----BEGIN"}, false, false, true},
		// Base64 of "-----BEGIN": a key (or certificate) as kubeconfig's
		// *-key-data and many secrets stores hold it.
		{"base64 PEM", lazy(`\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}`), 0, []string{"LS0tLS1CRUdJTi"}, false, false, false},
		{"OpenVPN static key", lazy(`-----BEGIN OpenVPN Static key V\d+-----[\s\S]*?(?:-----END OpenVPN Static key V\d+-----|\z)`), 0, []string{"-----BEGIN OpenVPN"}, false, false, true},
		// RFC 4716 (SSH.com, puttygen's export) and PuTTY's own .ppk.
		{"private key", lazy(`---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----[\s\S]*?(?:---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|\z)`), 0, []string{"---- BEGIN SSH2"}, false, false, true},
		{"private key", lazy(`PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC:[^\r\n]*|\z)`), 0, []string{"PuTTY-User-Key-File-"}, false, false, true},
		{"GitHub token", lazy(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), 0, []string{"gh", "github_pat_"}, false, false, false},
		{"GitLab token", lazy(`\bglpat-[A-Za-z0-9_-]{16,}`), 0, []string{"glpat-"}, false, false, false},
		{"Slack token", lazy(`\bxox[abeoprs]-[A-Za-z0-9-]{10,}`), 0, []string{"xox"}, false, false, false},
		{"Anthropic key", lazy(`\bsk-ant-[A-Za-z0-9_-]{16,}`), 0, []string{"sk-ant-"}, false, false, false},
		{"OpenAI-style key", lazy(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), 0, []string{"sk-"}, false, false, false},
		{"Stripe key", lazy(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), 0, []string{"k_live_", "k_test_"}, false, false, false},
		{"Google API key", lazy(`\bAIza[A-Za-z0-9_-]{35}`), 0, []string{"AIza"}, false, false, false},
		{"npm token", lazy(`\bnpm_[A-Za-z0-9]{36}`), 0, []string{"npm_"}, false, false, false},
		{"PyPI token", lazy(`\bpypi-AgE[A-Za-z0-9_-]{50,}`), 0, []string{"pypi-AgE"}, false, false, false},
		{"age secret key", lazy(`\bAGE-SECRET-KEY-1[0-9A-Z]{50,}`), 0, []string{"AGE-SECRET-KEY-1"}, false, false, false},
		{"AWS access key id", lazy(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`), 0, []string{"AKIA", "ASIA"}, false, false, false},
		{"JSON web token", lazy(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), 0, []string{"eyJ"}, false, false, false},
		{"authorization header", lazy(`(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{8,})`), 1, []string{"bearer", "basic", "token"}, true, false, false},
		{"URL password", lazy(`(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`), 1, []string{"://"}, false, false, false},
		// serve's login link (http://NAME.localhost:PORT/?token=…, its
		// query already a secret assignment) as a browser's history or
		// a log may print it: URL-encoded, or with a one-letter name.
		// Only 64 hex digits, serve's tokens, so that a checksum
		// elsewhere stays visible.
		{"login link token", lazy(`(?i)(?:[?&]|%3F|%26)(?:t|token)(?:=|%3D)([0-9a-f]{64})(?:[^0-9a-z]|\z)`), 1, []string{"t=", "n=", "t%3d", "n%3d"}, true, false, false},
		// .netrc: "machine h login u password p", or password on a line
		// of its own; no = or : after the name.
		{"netrc password", lazy(`(?im)(?:\blogin[ \t]+\S+[ \t]+|^[ \t]*)password[ \t]+([^\s=:]\S*)`), 1, []string{"password"}, true, false, false},
		{"XML secret", lazy(`(?i)<(?:password|passwd|secret|token|api[_-]?key|client[_-]?secret)>([^<]+)</`), 1, []string{"<password>", "<passwd>", "<secret>", "<token>", "<api", "<client"}, true, false, false},
		// key = value, key: value, "key": "value", KEY=value (env files,
		// shell). The value ends where a shell word would (valueEnd).
		// Every name it knows holds one of the literals (client_secret
		// holds secret; "credential" stands for credentials).
		{"secret assignment", lazy(`(?i)\b[a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|key[_-]?data|private[_-]?key|client[_-]?secret|credentials?|auth)["']?(\s*)[:=](\s*)(\S)`), 3, []string{"passw", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key", "accountkey", "account_key", "account-key", "keydata", "key_data", "key-data", "privatekey", "private_key", "private-key", "credential", "auth"}, true, true, false},
	}
})

// Find returns the secrets in s, sorted, with overlapping matches merged.
// A secret split by quotes or backslashes, as a shell would join it
// (sk-proj-"…", 'AKIA”…', ghp_\…), is found too: its range then runs from
// its first byte to its last, the quotes inside included.
func Find(s string) []Match {
	ms := find(s, false)
	if strings.ContainsAny(s, `"'\`) {
		t, pos := unquoted(s)
		for _, m := range find(t, true) {
			ms = append(ms, Match{Start: pos[m.Start], End: pos[m.End-1] + 1, Kind: m.Kind})
		}
	}
	return merge(ms)
}

// unquoted returns s without quote characters and backslashes (a
// backslash-newline pair is dropped whole), and the offset in s of each
// byte kept.
func unquoted(s string) (string, []int) {
	b := make([]byte, 0, len(s))
	pos := make([]int, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			continue
		case '\\':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			continue
		default:
			b = append(b, c)
			pos = append(pos, i)
		}
	}
	return string(b), pos
}

// lazy returns expr compiled on first use.
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// find returns the pattern matches in s, unsorted; tokensOnly keeps to the
// patterns of whole tokens (those that hide their whole match).
func find(s string, tokensOnly bool) []Match {
	var ms []Match
	var folded *string
	fold := func() string {
		if folded == nil {
			f := foldASCII(s)
			folded = &f
		}
		return *folded
	}
	ps := patterns()
	quotes := quoteState{s: s}
	var docs []heredoc // found once, for the first private key
	for i := range ps {
		p := &ps[i]
		if tokensOnly && p.group != 0 || !p.could(s, fold) {
			continue
		}
		for _, loc := range p.re().FindAllStringSubmatchIndex(s, -1) {
			start, end := loc[2*p.group], loc[2*p.group+1]
			if start < 0 || end <= start {
				continue
			}
			if p.group > 0 {
				if p.scan {
					// KEY= value: in a shell, an empty KEY, then a
					// command.
					if loc[2] == loc[3] && loc[4] < loc[5] && s[loc[4]-1] == '=' {
						continue
					}
					end = len(s) // valueEnd stops at a line's end
				}
				end = valueEnd(s, start, end, quotes.at(start))
				if end <= start {
					continue
				}
			}
			if p.block {
				if docs == nil {
					docs = heredocs(s)
					if docs == nil {
						docs = []heredoc{}
					}
				}
				end = blockEnd(s, start, end, docs)
			}
			if p.group > 0 && isPlaceholder(s[start:end]) {
				continue
			}
			ms = append(ms, Match{Start: start, End: end, Kind: p.kind, keyed: p.group > 0})
		}
	}
	return ms
}

// merge sorts matches and merges those that overlap.
func merge(ms []Match) []Match {
	if len(ms) < 2 {
		return ms
	}
	sort.Slice(ms, func(i, j int) bool {
		return ms[i].Start < ms[j].Start || ms[i].Start == ms[j].Start && ms[i].End > ms[j].End
	})
	out := ms[:1]
	for _, m := range ms[1:] {
		last := &out[len(out)-1]
		if m.Start < last.End {
			last.End = max(last.End, m.End)
			continue
		}
		out = append(out, m)
	}
	return out
}

// isPlaceholder reports values that only name a secret: empty, already
// masked, variable references ($TOKEN, ${TOKEN}, %TOKEN%), or a few stars.
func isPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`)
	switch {
	case v == "", v == Redacted, strings.Trim(v, "*xX.") == "":
		return true
	case strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%") && strings.HasSuffix(v, "%"):
		return true
	}
	return false
}

// Mask returns s with every secret replaced by Redacted. Quotes around a
// masked value are kept.
func Mask(s string) string {
	ms := Find(s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, m := range ms {
		start, end := m.Start, m.End
		if end-start >= 2 && (s[start] == '"' || s[start] == '\'') && s[end-1] == s[start] {
			start, end = start+1, end-1
		}
		b.WriteString(s[prev:start])
		b.WriteString(Redacted)
		prev = end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// MaskTokens returns s with every secret that is recognisable on its own
// (a token's shape, a private key) replaced by Redacted; a key name in s
// makes nothing after it a secret. It is for text written about a call,
// not by it (a reason, a finding's why): "reads credentials: ~/.aws/config"
// names a path, not a secret. Set.MaskDerived also hides the call's own
// secrets.
func MaskTokens(s string) string { return (*Set)(nil).MaskDerived(s) }

// secretKey reports whether a JSON object key names a secret, so that its
// whole value is hidden (headers {"Authorization": …}, {"password": …}).
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "authorization", "cookie", "private_key", "privatekey", "credential", "x-api-key"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// MaskJSON masks every string in a JSON value, object keys included, and
// the whole value of every key that names a secret. Invalid JSON is masked
// as text and returned as a JSON string, so the result is always valid
// JSON.
func MaskJSON(raw json.RawMessage) json.RawMessage { return maskJSONWith(raw, Mask) }

func maskJSONWith(raw json.RawMessage, mask func(string) string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b, _ := json.Marshal(mask(string(raw)))
		return b
	}
	v = maskValue(v, mask)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func maskValue(v any, mask func(string) string) any {
	switch v := v.(type) {
	case string:
		return mask(v)
	case []any:
		for i := range v {
			v[i] = maskValue(v[i], mask)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			mk := mask(k)
			if s, ok := x.(string); ok && secretKey(k) && !isPlaceholder(s) {
				out[mk] = Redacted
				continue
			}
			out[mk] = maskValue(x, mask)
		}
		return out
	}
	return v
}
