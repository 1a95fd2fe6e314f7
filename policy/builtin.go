package policy

import (
	"sync"

	"github.com/custom-agent/custom-agent/permission"
)

// BuiltinFile is the name the built-in rules file (permission.BuiltinJSON)
// is parsed and reported under. It is no path: the file is compiled into
// the binary.
const BuiltinFile = "built-in rules"

// BuiltinPrefix starts the id of every built-in rule; no policy file may
// use it.
const BuiltinPrefix = "builtin:"

// builtinEntries parses the built-in rules file once, with the same strict
// parser as a policy file, and returns its rules at LevelBuiltin. Their
// examples are checked by the tests of both packages, not at every start.
var builtinEntries = sync.OnceValues(func() ([]Entry, error) {
	p, err := parse(BuiltinFile, permission.BuiltinJSON())
	if err != nil {
		return nil, err
	}
	es := p.entries(permission.LevelBuiltin)
	for i := range es {
		es[i].File = ""
	}
	return es, nil
})
