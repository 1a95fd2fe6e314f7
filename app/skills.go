package app

import (
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/skill"
	"github.com/custom-agent/custom-agent/support/termtext"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools/skilltool"
)

// Skills finds the user's skills and those of cwd's project (trusted when
// `custom-agent trust` recorded the directory holding the project's
// .custom-agent) and, when there are any, registers use_skill in router,
// which must not hold one yet. The session finds the catalog through the
// tool. problems are the skills left out or read with a caveat, for the
// caller to show; none of them stops a session, since a skill that is not
// offered narrows nothing and so loosens nothing. A problem's text has
// control characters escaped: the paths in it come from the repository,
// and a folder named with an escape sequence must not reach a terminal.
func Skills(router *tool.Router, cwd, configHome string) (*skill.Catalog, []error) {
	cat, problems := skill.Discover(skill.Options{
		Cwd: cwd, ConfigHome: configHome,
		Trusted: func(root string) (bool, error) { return policy.IsTrusted(configHome, root) },
	})
	if cat.Len() > 0 {
		router.Register(skilltool.New(cat))
	}
	for i, p := range problems {
		problems[i] = escaped{p}
	}
	return cat, problems
}

// escaped is an error whose text is safe to print on a terminal.
type escaped struct{ err error }

func (e escaped) Error() string { return termtext.Line(e.err.Error()) }
func (e escaped) Unwrap() error { return e.err }
