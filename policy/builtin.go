package policy

import (
	"errors"
	"slices"
	"sync"

	"github.com/custom-agent/custom-agent/permission"
)

//go:generate go test -run ^TestBuiltinGenerated$$ -update-builtin

// BuiltinFile is the name the built-in rules file (permission.BuiltinJSON)
// is parsed and reported under. It is no path: the file is compiled into
// the binary.
const BuiltinFile = "built-in rules"

// BuiltinPrefix starts the id of every built-in rule; no policy file may
// use it.
const BuiltinPrefix = "builtin:"

// The built-in rules are not parsed at every start: builtin_gen.go
// (written by go generate) holds them as Go values, builtinTable and
// builtinExamples, and TestBuiltinGenerated checks that they are exactly
// what the same strict parser as a policy file's reads from the embedded
// file. Their examples are checked by the tests of both packages, not at
// every start.

// builtinSet compiles the built-in rules once, as the engine sees them.
// Deciding a call needs nothing else of them.
var builtinSet = sync.OnceValues(func() (*permission.RuleSet, error) {
	set, err := compileEntries(builtinTable[:], permission.LevelBuiltin, permission.BuiltinSource)
	if err != nil {
		var re *permission.RuleError
		if errors.As(err, &re) {
			return nil, &Error{Path: BuiltinFile, RuleID: re.ID, Field: re.Field, Err: re.Err}
		}
		return nil, &Error{Path: BuiltinFile, Err: err}
	}
	return set, nil
})

// builtinFull returns the built-in rules as entries at LevelBuiltin, with
// their examples, built once when first asked for (Store.Entries): a call
// that is only decided never builds their examples.
var builtinFull = sync.OnceValue(joinBuiltin)

// joinBuiltin returns new entries of the built-in rules with their
// examples.
func joinBuiltin() []Entry {
	es := slices.Clone(builtinTable[:])
	for i, ex := range builtinExamples() {
		es[i].Rule.Examples = ex
	}
	return es
}
