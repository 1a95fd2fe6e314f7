package permission

import (
	"maps"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// Analysis is the judgement of a request's shell command: the parse and
// analysis that PathsToResolve, GlobsToExpand, TreesToScan and Check would
// otherwise each make again. Analyze computes it once; a caller puts it in
// Request.Analysis before asking the engine anything else about the
// request.
//
// An Analysis is bound to what it was computed from: the command text, the
// working directory the command runs in, Home and UserHomes. The engine
// uses it only when the request it is given holds exactly those, and
// analyses the command afresh otherwise, so an Analysis can make a
// decision cheaper but never different: the Decision still depends on the
// Request's arguments alone, and an Analysis of one command carried into a
// request for another is ignored. It is immutable and safe for concurrent
// use; the engine copies what it hands out.
type Analysis struct {
	command   string
	cwd, home string
	dataDir   string
	userHomes map[string]string
	res       shellrisk.Result
}

// Analyze parses and judges req's shell command, for Request.Analysis. It
// returns nil when the tool has no command argument or the command cannot
// be read (not a string, a working directory argument that is not one):
// Check then judges the request as it is. It is pure, like Check.
func Analyze(req Request) *Analysis {
	cmd, cwd, ok := shellInput(&req, pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir})
	if !ok {
		return nil
	}
	a := &Analysis{command: cmd, cwd: cwd, home: req.Home, dataDir: req.DataDir, userHomes: maps.Clone(req.UserHomes)}
	a.res = shellrisk.Analyze(cmd, shellrisk.Env{Cwd: cwd, Home: req.Home, UserHomes: a.userHomes, DataDir: req.DataDir})
	return a
}

// shellInput returns the command text of a shell call and the canonical
// working directory it runs in (the tool's working-directory argument, else
// the session's), with ok false when either argument is present but not a
// string.
func shellInput(req *Request, env pathrisk.Env) (cmd, cwd string, ok bool) {
	t := &req.Tool
	if t.CommandArg == "" {
		return "", "", false
	}
	cmd, ok = req.Args[t.CommandArg].(string)
	if !ok {
		return "", "", false
	}
	cwd = req.Cwd
	if t.CwdArg != "" {
		if v, present := req.Args[t.CwdArg]; present {
			s, isStr := v.(string)
			if !isStr {
				return "", "", false
			}
			cwd, _ = pathrisk.Canonical(s, env)
		}
	}
	return cmd, cwd, true
}

// fits reports whether a was computed from exactly these inputs.
func (a *Analysis) fits(cmd, cwd string, req *Request) bool {
	return a != nil && a.command == cmd && a.cwd == cwd && a.home == req.Home && a.dataDir == req.DataDir && maps.Equal(a.userHomes, req.UserHomes)
}

// analyzeShell returns the analysis of cmd run in cwd: the request's own
// Analysis when it fits, else a fresh one. owned reports whether the
// result's slices are the caller's to change; a cached result is shared and
// must be copied before anything is appended to or sorted in it.
func (j *judge) analyzeShell(cmd, cwd string) (res shellrisk.Result, owned bool) {
	if a := j.req.Analysis; a.fits(cmd, cwd, &j.req) {
		return a.res, false
	}
	// Analyze's default credential classifier is pathrisk.IsCredential with
	// the same Home and UserHomes: one list, and no closure to allocate.
	return shellrisk.Analyze(cmd, shellrisk.Env{Cwd: cwd, Home: j.req.Home, UserHomes: j.req.UserHomes, DataDir: j.req.DataDir}), true
}
