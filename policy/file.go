// Package policy loads permission rules from policy files. Matching them
// against calls is permission's job; this package only reads and checks
// files. (The full PolicyStore of spec §7 — levels, trust, session rules —
// comes later and will live here too.)
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/custom-agent/custom-agent/permission"
)

// Version is the only policy file version this package reads.
const Version = 1

// File is the JSON shape of a policy file:
//
//	{"version": 1, "rules": [{"id": "tests", "tool": "shell", "command": "npm test", "decision": "allow"}]}
//
// A rule's level and source are set by the loader, not the file.
type File struct {
	Version int               `json:"version"`
	Rules   []permission.Rule `json:"rules"`
}

// Error reports a policy file that cannot be used, with its position when
// the fault is a JSON syntax error.
type Error struct {
	Path string
	Line int // 1-based; 0 when unknown
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return e.Path + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// LoadFile reads a policy file and returns its rules with Level set to
// level and Source to path; a rule without an id gets "<path>#<n>". The
// rules are compiled once to check them, so every error is reported here
// rather than at the first call.
func LoadFile(path string, level permission.RuleLevel) ([]permission.Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	return Parse(path, b, level)
}

// Parse is LoadFile on bytes already read; path only names the source.
func Parse(path string, b []byte, level permission.RuleLevel) ([]permission.Rule, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &Error{Path: path, Line: line(b, err), Err: err}
	}
	if dec.More() {
		return nil, &Error{Path: path, Err: errors.New("trailing data after the policy object")}
	}
	if f.Version != Version {
		return nil, &Error{Path: path, Err: fmt.Errorf("version %d is not supported (want %d)", f.Version, Version)}
	}
	for i := range f.Rules {
		r := &f.Rules[i]
		r.Level, r.Source = level, path
		if r.ID == "" {
			r.ID = path + "#" + strconv.Itoa(i+1)
		}
	}
	if _, err := permission.Compile(f.Rules); err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	return f.Rules, nil
}

// line returns the line of a JSON decoding error, or 0.
func line(b []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 0
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return bytes.Count(b[:off], []byte("\n")) + 1
}
