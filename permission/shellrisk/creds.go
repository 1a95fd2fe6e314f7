package shellrisk

import "github.com/custom-agent/custom-agent/permission/pathrisk"

// BuiltinCredential is the engine's credential table (pathrisk.IsCredential)
// with only the home directory known: what Analyze applies when
// Env.IsCredential is nil and Env.UserHomes is empty. p must be absolute
// and clean.
func BuiltinCredential(p, home string) bool {
	return pathrisk.IsCredential(p, pathrisk.Env{Home: home})
}

// globMayMatchCredential reports whether a glob pattern may match a
// credential location or a directory holding one, by pathrisk's table.
func (a *analyzer) globMayMatchCredential(pat string) bool {
	return pathrisk.GlobMayMatchCredential(pat, a.pathEnv())
}
