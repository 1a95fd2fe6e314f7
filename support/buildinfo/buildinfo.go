// Package buildinfo reports the version of the running custom-agent binary.
package buildinfo

import "runtime/debug"

// Version reports the module version stamped by the go command, or the VCS
// revision for a build from a checkout ("devel-" and 12 hex digits, with
// "+dirty" when the tree had changes).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel-" + rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
