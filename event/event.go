// Package event defines the versioned envelope and the typed payloads of every
// event custom-agent records, and the canonical encoding their hash chain is
// computed over. It is pure: no I/O, no clock (callers pass the time in).
//
// An Event is immutable once it has a Hash. The event log (package eventlog)
// assigns Seq, PrevHash and Hash; everything else comes from a Draft.
package event

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
	"time"
)

// Version is the envelope version written in every event's "v" field.
// Readers refuse events of a version they do not know.
const Version = 1

// GenesisHash is the PrevHash of the first event of every session.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Event is one entry of a session's log, encoded as JSON in camelCase as in
// the spec's §5 worked example.
type Event struct {
	V         int             `json:"v"`
	Seq       uint64          `json:"seq"`
	SessionID string          `json:"sessionId"`
	TurnID    string          `json:"turnId,omitempty"`
	Type      Type            `json:"type"`
	TS        time.Time       `json:"ts"`
	Payload   json.RawMessage `json:"payload"`
	PrevHash  string          `json:"prevHash"`
	Hash      string          `json:"hash"`
}

// Draft is an event before the log has placed it: the log assigns Seq (unless
// the caller names the Seq it expects, which makes a retried append
// idempotent), PrevHash and Hash.
type Draft struct {
	SessionID string
	TurnID    string
	TS        time.Time
	// Seq, when non-zero, is the sequence number the caller expects this
	// event to get. An append of a Draft whose Seq is already stored with
	// identical content returns the stored event instead of a duplicate.
	Seq     uint64
	Type    Type
	Payload json.RawMessage // canonical JSON, as produced by NewDraft

	// canonLen and canonSum name the payload NewDraft encoded (its length
	// and CRC-32C): while Payload still holds those bytes, Prepare need
	// not canonicalise it again (about 10 µs of a 1 KB event's append).
	// A payload set or changed afterwards does not match and is
	// canonicalised as any other.
	canonLen int
	canonSum uint32
}

// castagnoli is made on first use: making it is 0.1 ms, which a process
// that appends no event (version, check) need not pay at start.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// canonical reports whether d's payload is the one NewDraft encoded.
func (d *Draft) canonical() bool {
	return d.canonLen > 0 && len(d.Payload) == d.canonLen && crc32.Checksum(d.Payload, castagnoli()) == d.canonSum
}

// NewDraft validates p and encodes it canonically.
func NewDraft(sessionID, turnID string, ts time.Time, p Payload) (Draft, error) {
	if sessionID == "" {
		return Draft{}, errors.New("event: empty session id")
	}
	if err := p.Validate(); err != nil {
		return Draft{}, fmt.Errorf("event %s: %w", p.EventType(), err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return Draft{}, fmt.Errorf("event %s: encoding payload: %w", p.EventType(), err)
	}
	can, err := Canonical(raw)
	if err != nil {
		return Draft{}, fmt.Errorf("event %s: %w", p.EventType(), err)
	}
	return Draft{SessionID: sessionID, TurnID: turnID, TS: ts, Type: p.EventType(), Payload: can,
		canonLen: len(can), canonSum: crc32.Checksum(can, castagnoli())}, nil
}

// Seal turns a draft into the event at seq after prev, computing its hash.
// The timestamp is normalised to UTC with microsecond precision so that it
// survives every store's round trip byte for byte.
func Seal(d Draft, seq uint64, prevHash string) (Event, error) {
	p, err := Prepare(d)
	if err != nil {
		return Event{}, err
	}
	return p.Seal(seq, prevHash), nil
}

// Prepared is a draft whose type is known and whose payload is canonical:
// all that is left to seal it is its place in the chain. Stores prepare
// drafts in the appending goroutine so that their single writer only
// hashes. The zero value is not valid; use Prepare.
type Prepared struct {
	d Draft
}

// Prepare checks the draft and canonicalises its payload.
func Prepare(d Draft) (Prepared, error) {
	if !d.Type.Known() {
		return Prepared{}, fmt.Errorf("event: unknown type %q", d.Type)
	}
	if !d.canonical() {
		payload, err := Canonical(d.Payload)
		if err != nil {
			return Prepared{}, fmt.Errorf("event %s: %w", d.Type, err)
		}
		d.Payload = payload
	}
	d.TS = NormalizeTime(d.TS)
	return Prepared{d: d}, nil
}

// Draft returns the prepared draft (payload canonical, time normalised).
func (p Prepared) Draft() Draft { return p.d }

// Seal places the prepared draft at seq after prevHash and hashes it.
func (p Prepared) Seal(seq uint64, prevHash string) Event {
	e := Event{
		V:         Version,
		Seq:       seq,
		SessionID: p.d.SessionID,
		TurnID:    p.d.TurnID,
		Type:      p.d.Type,
		TS:        p.d.TS,
		Payload:   p.d.Payload,
		PrevHash:  prevHash,
	}
	e.Hash = hashOf(e.canonicalBytes(e.Payload))
	return e
}

// NormalizeTime returns t in UTC, truncated to microseconds, without a
// monotonic clock reading.
func NormalizeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// CanonicalBytes is the encoding the hash is computed over: the envelope's
// fields except hash, in a fixed order, compact, no HTML escaping, with the
// payload in canonical form.
func (e Event) CanonicalBytes() []byte {
	payload, err := Canonical(e.Payload)
	if err != nil {
		// A payload that is not JSON cannot have been sealed; hash its
		// bytes as a JSON string so that Verify reports a mismatch
		// instead of panicking on tampered data.
		payload, _ = json.Marshal(string(e.Payload))
	}
	return e.canonicalBytes(payload)
}

// canonicalBytes encodes the envelope around an already canonical payload.
func (e Event) canonicalBytes(payload json.RawMessage) []byte {
	b := make([]byte, 0, 256+len(payload))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"sessionId":`...)
	b = appendJSONString(b, e.SessionID)
	b = append(b, `,"turnId":`...)
	b = appendJSONString(b, e.TurnID)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, string(e.Type))
	b = append(b, `,"ts":"`...)
	b = e.TS.UTC().AppendFormat(b, TimeFormat)
	b = append(b, `","payload":`...)
	b = append(b, payload...)
	b = append(b, `,"prevHash":`...)
	b = appendJSONString(b, e.PrevHash)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off (so a canonical payload and the envelope agree).
func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) { // ids, types and hashes: nothing to escape
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := marshalNoEscape(s)
	return append(b, q...)
}

// plainJSON reports whether encoding/json writes s as itself between
// quotes: printable ASCII, no quote and no backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// TimeFormat is how ts is written in canonical bytes: RFC 3339, UTC, with
// exactly six fractional digits.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// ComputeHash returns the hex SHA-256 of the event's canonical bytes.
func (e Event) ComputeHash() string { return hashOf(e.CanonicalBytes()) }

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// wire is the JSON form of an Event, fields in envelope order, ts as text.
type wire struct {
	V         int             `json:"v"`
	Seq       uint64          `json:"seq"`
	SessionID string          `json:"sessionId"`
	TurnID    string          `json:"turnId,omitempty"`
	Type      Type            `json:"type"`
	TS        string          `json:"ts"`
	Payload   json.RawMessage `json:"payload"`
	PrevHash  string          `json:"prevHash"`
	Hash      string          `json:"hash"`
}

// MarshalJSON writes the event with its fields in envelope order and ts in
// TimeFormat, without HTML escaping, so a log exported as JSONL reads back
// byte for byte.
func (e Event) MarshalJSON() ([]byte, error) {
	return marshalNoEscape(wire{
		V: e.V, Seq: e.Seq, SessionID: e.SessionID, TurnID: e.TurnID, Type: e.Type,
		TS: e.TS.UTC().Format(TimeFormat), Payload: e.Payload, PrevHash: e.PrevHash, Hash: e.Hash,
	})
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Canonical returns the canonical form of a JSON value: object keys sorted,
// no insignificant whitespace, no HTML escaping, numbers as written. It is a
// fixed point: Canonical(Canonical(x)) == Canonical(x).
func Canonical(raw []byte) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON: trailing data")
	}
	return marshalNoEscape(v)
}
