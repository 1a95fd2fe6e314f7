package policy

import (
	"errors"
	"sync"

	"github.com/custom-agent/custom-agent/permission"
)

//go:generate go test -run ^TestBuiltinGenerated$ -update-builtin

// BuiltinFile is the name the built-in rules file (permission.BuiltinJSON)
// is parsed and reported under. It is no path: the file is compiled into
// the binary.
const BuiltinFile = "built-in rules"

// BuiltinPrefix starts the id of every built-in rule; no policy file may
// use it.
const BuiltinPrefix = "builtin:"

// builtinRules returns the built-in rules at LevelBuiltin, with their
// compiled set, once. They are not parsed at every start: builtinEntries
// (builtin_gen.go, written by go generate) holds them as Go values, and
// TestBuiltinGenerated checks that they are exactly what the same strict
// parser as a policy file's reads from the embedded file. Their examples
// are checked by the tests of both packages, not at every start.
var builtinRules = sync.OnceValues(func() (fileRules, error) {
	es := builtinEntries()
	set, err := compileEntries(es, permission.LevelBuiltin, permission.BuiltinSource)
	if err != nil {
		var re *permission.RuleError
		if errors.As(err, &re) {
			return fileRules{}, &Error{Path: BuiltinFile, RuleID: re.ID, Field: re.Field, Err: re.Err}
		}
		return fileRules{}, &Error{Path: BuiltinFile, Err: err}
	}
	return fileRules{es, set}, nil
})
