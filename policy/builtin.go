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

// builtinRules parses the built-in rules file once, with the same strict
// parser as a policy file, and returns its rules at LevelBuiltin, with
// their compiled set. Their examples are checked by the tests of both
// packages, not at every start.
var builtinRules = sync.OnceValues(func() (fileRules, error) {
	p, err := parse(BuiltinFile, permission.BuiltinJSON(), permission.LevelBuiltin)
	if err != nil {
		return fileRules{}, err
	}
	es := p.entries(permission.LevelBuiltin)
	for i := range es {
		es[i].File = ""
	}
	return fileRules{es, p.set}, nil
})
