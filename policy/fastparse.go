package policy

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/custom-agent/custom-agent/permission"
)

// parseFast reads a policy file in one pass, for the common case of a file
// with nothing unusual in it: encoding/json decodes a thousand rules at
// about 50 MB/s, which was most of a policy load.
//
// It is stricter than the strict reader (parsed.read), never looser: the
// top level must be one object with "version" (digits) and "rules" each at
// most once, keys written exactly (encoding/json also takes "ID" for "id",
// and unescapes keys), and strings valid UTF-8 without \u escapes (which
// encoding/json repairs or combines in its own way). Whatever it refuses
// (ok false), every error included, is read again strictly, which then
// reports the error at its line and column, so a file gives the same rules
// either way (TestFastParseSameRules).
func parseFast(path string, src []byte) (p *parsed, ok bool) {
	if !utf8.Valid(src) || bytes.Contains(src, []byte(`\u`)) {
		return nil, false
	}
	p = &parsed{path: path, src: src}
	var version, rules bool
	i := skipWS(src, 0)
	if i >= len(src) || src[i] != '{' {
		return nil, false
	}
	i = skipWS(src, i+1)
	for first := true; ; first = false {
		if i < len(src) && src[i] == '}' && first {
			break
		}
		var key string
		switch {
		case bytes.HasPrefix(src[i:], []byte(`"version"`)):
			key, i = "version", i+len(`"version"`)
		case bytes.HasPrefix(src[i:], []byte(`"rules"`)):
			key, i = "rules", i+len(`"rules"`)
		default:
			return nil, false
		}
		if i = skipWS(src, i); i >= len(src) || src[i] != ':' {
			return nil, false
		}
		i = skipWS(src, i+1)
		switch key {
		case "version":
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			v, err := strconv.Atoi(string(src[i:j]))
			if version || err != nil || v != Version {
				return nil, false
			}
			version, i = true, j
		case "rules":
			if rules || i >= len(src) || src[i] != '[' {
				return nil, false
			}
			// Room for as many rules as the array has objects, so that
			// the decoder does not grow the list a rule at a time. It
			// is only a hint (examples are objects too), bounded by the
			// size of the file and by maxRuleHint, so that a file of
			// braces (a project's file is the repository's) cannot
			// make it allocate many times its size; not a promise of
			// validity.
			n := min(bytes.Count(src[i:], []byte{'{'}), (len(src)-i)/16, maxRuleHint)
			frs := make([]fastRule, 0, n)
			rest, err := segjson.Parse(src[i:], &frs, segjson.DisallowUnknownFields|segjson.DontMatchCaseInsensitiveStructFields)
			if err != nil {
				return nil, false
			}
			ents := make([]Entry, len(frs))
			for k := range frs {
				frs[k].into(&ents[k].Rule)
			}
			offs := elementOffsets(src, i, len(ents))
			if len(offs) != len(ents) {
				return nil, false
			}
			if len(ents) > 0 {
				p.ents, p.offs = ents, offs
			}
			rules, i = true, len(src)-len(rest)
		}
		if i = skipWS(src, i); i < len(src) && src[i] == ',' {
			i = skipWS(src, i+1)
			continue
		}
		if i >= len(src) || src[i] != '}' {
			return nil, false
		}
		break
	}
	if !version || skipWS(src, i+1) != len(src) {
		return nil, false
	}
	return p, true
}

// maxRuleHint bounds the room made for rules before decoding; a longer list
// grows as the decoder appends.
const maxRuleHint = 4096

// skipWS returns the offset of the first byte at or after i that is not
// JSON white space.
func skipWS(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

// elementOffsets returns the offset in src of each of the n elements of
// the JSON array whose '[' is at off. src must hold valid JSON there.
func elementOffsets(src []byte, off, n int) []int {
	offs := make([]int, 0, n)
	i := off + 1
	for len(offs) < n {
		i = skipSpace(src, i)
		if i >= len(src) || src[i] == ']' {
			break
		}
		offs = append(offs, i)
		i = skipValue(src, i)
	}
	return offs
}

// skipValue returns the offset just past the JSON value starting at i.
func skipValue(src []byte, i int) int {
	depth := 0
	for ; i < len(src); i++ {
		c := src[i]
		if !structural[c] {
			continue
		}
		switch c {
		case '"':
			// The closing quote: a byte loop, faster than IndexByte on
			// the short strings rules are made of.
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth <= 0 {
				if depth == 0 {
					return i + 1
				}
				return i
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return min(i, len(src))
}

// structural marks the bytes skipValue looks at outside strings.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true, ',': true}

// fastRule is Rule as parseFast decodes it. Its args and its examples'
// calls are map types of their own: segmentio's decoder makes every nil
// map[string]string or map[string]any with room for 64 entries (2-4 KB
// each, most of a load's garbage, and 84% of what the built-in rules'
// examples cost at every start), and fills a map it is given as it is.
// TestFastRuleInStep keeps the types' fields in step.
type fastRule struct {
	ID       string             `json:"id"`
	Tool     string             `json:"tool"`
	Command  string             `json:"command,omitempty"`
	Path     string             `json:"path,omitempty"`
	URL      string             `json:"url,omitempty"`
	Args     fastArgs           `json:"args,omitempty"`
	Decision permission.Verdict `json:"decision"`
	Comment  string             `json:"comment,omitempty"`
	Examples *fastExamples      `json:"examples,omitempty"`
}

// fastExamples is Examples as parseFast decodes it.
type fastExamples struct {
	Match    []fastCall `json:"match,omitempty"`
	NotMatch []fastCall `json:"notMatch,omitempty"`
}

// fastCall is one example's arguments, decoded into a map of its size.
type fastCall map[string]any

// UnmarshalJSON decodes the arguments into a map of their size.
func (c *fastCall) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = nil
		return nil
	}
	m := make(map[string]any, bytes.Count(b, []byte(":")))
	if err := segjson.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = m
	return nil
}

// examples returns e as Examples, nil and empty lists kept as they are.
func (e *fastExamples) examples() *Examples {
	if e == nil {
		return nil
	}
	calls := func(cs []fastCall) []map[string]any {
		if cs == nil {
			return nil
		}
		out := make([]map[string]any, len(cs))
		for i, c := range cs {
			out[i] = c
		}
		return out
	}
	return &Examples{Match: calls(e.Match), NotMatch: calls(e.NotMatch)}
}

type fastArgs map[string]string

// UnmarshalJSON decodes the args into a map of their size.
func (a *fastArgs) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = nil
		return nil
	}
	m := make(map[string]string, bytes.Count(b, []byte(":")))
	if err := segjson.Unmarshal(b, &m); err != nil {
		return err
	}
	*a = m
	return nil
}

// into sets *r, which must be zero, to the rule f holds.
func (f *fastRule) into(r *Rule) {
	r.ID, r.Tool, r.Command, r.Path, r.URL, r.Args = f.ID, f.Tool, f.Command, f.Path, f.URL, map[string]string(f.Args)
	r.Decision, r.Comment, r.Examples = f.Decision, f.Comment, f.Examples.examples()
}
