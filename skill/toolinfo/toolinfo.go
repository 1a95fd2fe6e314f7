// Package toolinfo is use_skill's name and metadata as the engine reads
// them, apart from package skill, which reads skills (with a YAML parser):
// policy and check need only these, and custom-agent-gate, which links
// them, starts without the YAML package's init.
package toolinfo

import (
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Name is the tool the model activates a skill with.
const Name = "use_skill"

// Info is use_skill's metadata as the engine reads it, without the
// schema that lists a catalog's skills (tools/skilltool adds it): what
// `custom-agent check --tool use_skill` decides with. It lives here, not in
// tools/skilltool, so that check links no tool package.
func Info() permission.ToolInfo {
	return permission.ToolInfo{Name: Name, Risk: risk.Read, Kind: permission.KindRead}
}
