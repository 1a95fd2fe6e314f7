// Package risk holds the vocabulary every part of the permission core shares:
// the ordered risk levels of spec §4 and the findings that explain why a call
// was judged at a level. It is pure: no I/O, no clock, no mutable globals.
package risk

import (
	"encoding/json"
	"fmt"
)

// Level is a risk level. The order is the spec's: each level is strictly more
// dangerous than the one before, so the risk of a call is the maximum of the
// levels its parts raise. The zero value is Unknown, which is not a valid
// judgement: callers must treat it as the highest risk.
type Level uint8

const (
	Unknown Level = iota
	Read
	Write
	Execute
	Network
	Credential
	Destructive
)

var names = [...]string{"unknown", "read", "write", "execute", "network", "credential", "destructive"}

// String returns the level's name as used in events and policy files.
func (l Level) String() string {
	if int(l) < len(names) {
		return names[l]
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// Parse returns the level with the given name.
func Parse(s string) (Level, error) {
	for i, n := range names {
		if n == s && i != int(Unknown) {
			return Level(i), nil
		}
	}
	return Unknown, fmt.Errorf("unknown risk level %q (want read, write, execute, network, credential or destructive)", s)
}

// Max returns the higher of two levels.
func Max(a, b Level) Level {
	if a > b {
		return a
	}
	return b
}

// Raise returns the level one step above l, capped below destructive: a path
// outside the working directory raises a call one level (spec §3 step 2), but
// no amount of raising invents an irreversible action.
func Raise(l Level) Level {
	if l < Credential {
		return l + 1
	}
	return l
}

// MarshalJSON encodes the level as its name.
func (l Level) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON decodes a level from its name.
func (l *Level) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("risk level: %w", err)
	}
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Span is a half-open byte range [Start, End) into one argument's string value.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Finding explains one reason a call was judged at a level: which argument,
// which exact bytes of it, and why a person should care.
type Finding struct {
	Risk Level  `json:"risk"`
	Arg  string `json:"arg"`            // name of the argument, e.g. "command" or "path"
	Span Span   `json:"span"`           // bytes of that argument's value
	Text string `json:"text,omitempty"` // the bytes of Span, for reading without the args
	Why  string `json:"why"`
}
