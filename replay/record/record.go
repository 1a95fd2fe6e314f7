// Package record writes what a decision depended on into the event log, so
// that package replay can decide it again from the log alone: the policy
// in force (a policy.snapshot event, Snapshot) and, on the decision's own
// event, the request the engine was given (Facts).
//
// The policy is recorded as a snapshot, whole, at the start of every turn
// whose rules differ from the last snapshot the session recorded, and again
// after an answer changed them: a replay takes the latest snapshot and
// folds no policy.changed event. The built-in rules are part of the build,
// like the engine, and are recorded by digest only.
package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/buildinfo"
)

// Snapshot returns the policy.snapshot of p, the compiled policy the engine
// is given. When rules is a *policy.Store, the snapshot also names each
// rule's line, the project and its trust, and the project allow rules that
// do not count because the project is not trusted.
func Snapshot(p *permission.Policy, rules any) event.PolicySnapshotPayload {
	type key struct {
		level permission.RuleLevel
		file  string
		id    string
	}
	lines := map[key]int{}
	snap := event.PolicySnapshotPayload{Rules: []event.SnapshotRule{}}
	if st, ok := rules.(*policy.Store); ok && st != nil {
		for _, e := range st.Entries("") {
			lines[key{e.Level, e.File, e.Rule.ID}] = e.Line
			if e.Level == permission.LevelProject && e.Untrusted && e.Rule.Decision == permission.Allow {
				r := e.Rule.Permission(e.Level, e.File)
				snap.Ignored = append(snap.Ignored, event.SnapshotRule{Rule: mustJSON(r), Line: e.Line})
			}
		}
		if proj, trusted := st.Project(); proj.Exists {
			snap.Project = &event.SnapshotProject{Root: proj.Root, File: proj.File, Trusted: trusted}
		}
	}
	var builtin []permission.Rule
	for _, r := range p.Rules() {
		if r.Level == permission.LevelBuiltin {
			builtin = append(builtin, r)
			continue
		}
		snap.Rules = append(snap.Rules, event.SnapshotRule{Rule: mustJSON(r), Line: lines[key{r.Level, r.Source, r.ID}], TightenOnly: r.TightenOnly})
	}
	if builtin != nil {
		snap.Builtin = &event.BuiltinRules{Count: len(builtin), Digest: RulesDigest(builtin)}
	}
	snap.Digest = SnapshotDigest(&snap)
	return snap
}

// SnapshotDigest is the digest of a snapshot's rules, ignored rules and
// built-in rules (its Digest field aside).
// It is computed over the canonical encoding the log stores, so that the
// digest of a snapshot read back from the log is the digest it was
// recorded with.
func SnapshotDigest(s *event.PolicySnapshotPayload) string {
	c := *s
	c.Digest = ""
	b, err := event.Canonical(mustJSON(c))
	if err != nil {
		b = mustJSON(c)
	}
	return digest(b)
}

// RulesDigest is the digest of a list of rules, as a snapshot names the
// built-in rules by it.
func RulesDigest(rules []permission.Rule) string { return digest(mustJSON(rules)) }

// BuiltinDigest is RulesDigest of this build's built-in rules.
var BuiltinDigest = sync.OnceValue(func() string { return RulesDigest(permission.BuiltinRules()) })

// HistoryDigest is the digest of the prior approvals given to the engine,
// those whose arguments hold a secret left out; "" for none. A replay
// cannot rebuild such an approval (the log keeps its arguments masked),
// and needs not: it can only match a call with the same secret, whose
// facts are masked too and which is not replayed.
func HistoryDigest(h []permission.Prior) string {
	var kept []permission.Prior
	for _, p := range h {
		if !secrets.Holds(p.Args) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return digest(mustJSON(kept))
}

// Facts returns what the decision d of req was made from, for its event:
// req without its policy (policyDigest names the snapshot holding it) and
// history (by digest), masked of the secrets in sec.
func Facts(req permission.Request, d permission.Decision, sec *secrets.Set, policyDigest string) *event.DecisionFacts {
	hist := HistoryDigest(req.History)
	req.Policy, req.History, req.Analysis = nil, nil, nil
	f := &event.DecisionFacts{
		Engine: permission.EngineVersion, Build: build(), Policy: policyDigest, History: hist,
		Decision: string(d.Decision),
	}
	// The request is stored in the log's canonical form, masked: the
	// arguments as the call's events mask them, every other string (a
	// resolved path, a tree's facts) of the secrets the arguments hold
	// and of anything that looks like one. The names of files a scan
	// found are not secrets and stay.
	if raw, masked, err := maskedRequest(req, sec); err == nil {
		f.Request, f.Masked = raw, masked
	}
	if d.Rule != nil {
		f.Rule = mustJSON(d.Rule)
	}
	return f
}

// maskedRequest returns req in canonical form, masked, and whether
// masking changed it. It costs one decode and two encodings of the request
// and a masking of its arguments (BenchmarkFacts).
func maskedRequest(req permission.Request, sec *secrets.Set) (json.RawMessage, bool, error) {
	args, err := encodeNoEscape(req.Args)
	if err != nil {
		return nil, false, err
	}
	margs := sec.MaskJSON(args)
	// encodeNoEscape sorts keys as MaskJSON does, so the two differ only
	// where something was masked.
	changed := !bytes.Equal(margs, args)
	req.Args = nil
	rest, err := json.Marshal(req)
	if err != nil {
		return nil, false, err
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, false, err
	}
	for k, x := range v {
		v[k] = maskStrings(x, sec, &changed)
	}
	v["args"] = json.RawMessage(margs)
	out, err := encodeNoEscape(v)
	return out, changed, err
}

// encodeNoEscape is json.Marshal without HTML escaping: map keys sorted,
// as the log's canonical form has them.
func encodeNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// maskStrings masks every string and object key in v with sec.Mask,
// noting in changed whether any changed.
func maskStrings(v any, sec *secrets.Set, changed *bool) any {
	switch v := v.(type) {
	case string:
		m := sec.Mask(v)
		if m != v {
			*changed = true
		}
		return m
	case []any:
		for i := range v {
			v[i] = maskStrings(v[i], sec, changed)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[maskStrings(k, sec, changed).(string)] = maskStrings(x, sec, changed)
		}
		return out
	}
	return v
}

var build = sync.OnceValue(buildinfo.Version)

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mustJSON encodes v without HTML escaping. The values encoded here are
// plain data (rules, requests) that always encode.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("record: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TaintOf returns the taint a recorded event sets on the rest of its
// session: a tool.completed or tool.failed whose output the injection
// scanner flagged (its payload carries injection), named by its seq and
// call id. Nil for any other event. It is a pure function of the event:
// the taint of a request is TaintOf of the first flagged event before it
// in the log, which is how the session sets Request.Taint and how replay
// checks the recorded one.
func TaintOf(e event.Event) *permission.Taint {
	if e.Type != event.ToolCompleted && e.Type != event.ToolFailed {
		return nil
	}
	var p struct {
		ToolCallID string           `json:"toolCallId"`
		Injection  *event.Injection `json:"injection"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || p.Injection == nil {
		return nil
	}
	return &permission.Taint{Seq: e.Seq, ToolCallID: p.ToolCallID, Classes: p.Injection.Classes}
}
