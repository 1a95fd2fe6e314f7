package secrets

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// FragmentLen is the shortest run of a known secret that Set.Mask hides
// wherever it appears: a tool, an analyser or a truncated preview that
// quotes part of a secret still shows none of it, down to this many bytes.
const FragmentLen = 8

// minExact is the shortest known secret hidden wherever it appears whole;
// shorter ones ("abc" under an X-Api-Key header) are hidden only where the
// patterns find them, since hiding every "abc" would hide ordinary text.
const minExact = 6

// maxIndexed caps the bytes of secrets whose fragments are indexed, so that
// a call carrying megabytes of key material costs bounded memory. Secrets
// beyond it are still hidden whole and by the patterns.
const maxIndexed = 1 << 16

// Set is the secrets one call's arguments hold, collected once so that
// every string later derived from those arguments (a reason, a finding, a
// proposed rule, an error, a preview of what the tool printed) can be
// masked of them, even where only a fragment of one survives and the
// patterns alone would no longer recognise it.
//
// The zero Set and a nil *Set hold nothing; their Mask is Mask.
type Set struct {
	whole []string            // every secret, longest first
	frags map[string]struct{} // every FragmentLen-byte run of them
}

// Collect returns the secrets in a JSON value: what the patterns find in
// any string or object key, and the whole value of every key that names a
// secret (as MaskJSON hides them). Invalid JSON is scanned as text.
func Collect(raw json.RawMessage) *Set {
	s := &Set{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		s.addText(string(raw))
	} else {
		s.addValue(v)
	}
	s.index()
	return s
}

// CollectValue is Collect over a decoded value (a map of a tool's
// arguments, say).
func CollectValue(v any) *Set {
	raw, err := json.Marshal(v)
	if err != nil {
		return Collect(nil)
	}
	return Collect(raw)
}

// Holds reports whether a JSON value holds anything MaskJSON would hide.
func Holds(raw json.RawMessage) bool { return !Collect(raw).Empty() }

// With returns a set holding s's secrets and extra: secrets the caller
// knows of without finding them in the call (the script tokens of running
// serve instances), hidden whole and in part like the call's own. Values
// shorter than minExact are left out, as a known secret that short would
// hide ordinary text. s is not changed.
func (s *Set) With(extra ...string) *Set {
	out := &Set{}
	if s != nil {
		out.whole = append(out.whole, s.whole...)
	}
	n := len(out.whole)
	for _, e := range extra {
		if len(e) >= minExact {
			out.whole = append(out.whole, e)
		}
	}
	if len(out.whole) == n {
		return s
	}
	out.index()
	return out
}

// Longest returns the length in bytes of the set's longest secret, 0 when
// it holds none: how much context around a cut a caller must mask in for
// the cut to show no part of one.
func (s *Set) Longest() int {
	if s.Empty() {
		return 0
	}
	return len(s.whole[0]) // index sorts longest first
}

// Empty reports whether the set holds no secret.
func (s *Set) Empty() bool { return s == nil || len(s.whole) == 0 }

// Len returns how many distinct secrets the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.whole)
}

func (s *Set) addText(t string) {
	for _, m := range Find(t) {
		v := t[m.Start:m.End]
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		s.whole = append(s.whole, v)
	}
}

func (s *Set) addValue(v any) {
	switch v := v.(type) {
	case string:
		s.addText(v)
	case []any:
		for _, x := range v {
			s.addValue(x)
		}
	case map[string]any:
		for k, x := range v {
			s.addText(k)
			if str, ok := x.(string); ok && secretKey(k) && !isPlaceholder(str) {
				s.whole = append(s.whole, str)
				continue
			}
			s.addValue(x)
		}
	}
}

func (s *Set) index() {
	sort.Slice(s.whole, func(i, j int) bool { return len(s.whole[i]) > len(s.whole[j]) })
	s.whole = compactStrings(s.whole)
	budget := maxIndexed
	for _, w := range s.whole {
		if len(w) < FragmentLen || len(w) > budget {
			continue
		}
		budget -= len(w)
		if s.frags == nil {
			s.frags = map[string]struct{}{}
		}
		for i := 0; i+FragmentLen <= len(w); i++ {
			s.frags[w[i:i+FragmentLen]] = struct{}{}
		}
	}
}

func compactStrings(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, x := range ss {
		if x == "" || seen[x] {
			continue
		}
		seen[x] = true
		out = append(out, x)
	}
	return out
}

// covered returns the byte ranges of t, merged and sorted, that are a
// pattern match, a whole known secret, or a run of a known secret at least
// FragmentLen bytes long.
//
// With derived, t is text written about the call (a reason): a value
// after a key name in t is hidden only if it is one of the set's secrets,
// so a key name in prose cannot hide the words that follow it.
func (s *Set) covered(t string, derived bool) [][2]int {
	var rs [][2]int
	for _, m := range Find(t) {
		if derived && m.keyed && !s.knows(t[m.Start:m.End]) {
			continue
		}
		rs = append(rs, [2]int{m.Start, m.End})
	}
	if s != nil {
		for _, w := range s.whole {
			if len(w) < minExact {
				continue
			}
			for off := 0; ; {
				i := strings.Index(t[off:], w)
				if i < 0 {
					break
				}
				rs = append(rs, [2]int{off + i, off + i + len(w)})
				off += i + len(w)
			}
		}
		if len(s.frags) > 0 {
			for i := 0; i+FragmentLen <= len(t); i++ {
				if _, ok := s.frags[t[i:i+FragmentLen]]; ok {
					rs = append(rs, [2]int{i, i + FragmentLen})
				}
			}
		}
	}
	if len(rs) < 2 {
		return rs
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// knows reports whether v, without the quotes around it, is a secret of
// the set.
func (s *Set) knows(v string) bool {
	if s == nil {
		return false
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	for _, w := range s.whole {
		if w == v {
			return true
		}
	}
	return false
}

// Mask returns t with every secret the patterns find, and every whole or
// partial known secret of the set, replaced by Redacted.
func (s *Set) Mask(t string) string {
	if s.Empty() {
		return Mask(t)
	}
	return s.MaskSpan(t, 0, len(t))
}

// MaskDerived returns t, text written about the call (a reason, a
// finding's why), with the set's secrets, whole or in part, and every
// secret recognisable on its own replaced by Redacted. Unlike Mask, a key
// name in t hides nothing after it but one of the set's secrets.
func (s *Set) MaskDerived(t string) string { return s.maskSpan(t, 0, len(t), true) }

// MaskSpan returns t[start:end] masked as if all of t had been: a byte of
// the span is hidden when it belongs to a secret in t, even one that begins
// or ends outside the span. It is how a finding's text, a slice of an
// argument, is shown without the part of a secret it cuts through.
func (s *Set) MaskSpan(t string, start, end int) string { return s.maskSpan(t, start, end, false) }

func (s *Set) maskSpan(t string, start, end int, derived bool) string {
	start, end = max(0, min(start, len(t))), max(0, min(end, len(t)))
	if end < start {
		start = end
	}
	var b strings.Builder
	prev := start
	for _, r := range s.covered(t, derived) {
		lo, hi := max(r[0], start), min(r[1], end)
		if lo >= hi {
			continue
		}
		// Keep the quotes around a quoted value, as Mask does.
		if hi-lo >= 2 && (t[lo] == '"' || t[lo] == '\'') && t[hi-1] == t[lo] {
			lo, hi = lo+1, hi-1
		}
		b.WriteString(t[prev:lo])
		b.WriteString(Redacted)
		prev = hi
	}
	if prev == start && b.Len() == 0 {
		return t[start:end]
	}
	b.WriteString(t[prev:end])
	return b.String()
}

// MaskJSON is MaskJSON with the set's known secrets hidden in every string
// (and object key) too.
func (s *Set) MaskJSON(raw json.RawMessage) json.RawMessage {
	if s.Empty() {
		return MaskJSON(raw)
	}
	return maskJSONWith(raw, s.Mask)
}
