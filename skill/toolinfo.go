package skill

import (
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// ToolInfo is use_skill's metadata as the engine reads it, without the
// schema that lists a catalog's skills (tools/skilltool adds it): what
// `custom-agent check --tool use_skill` decides with. It lives here, not in
// tools/skilltool, so that check links no tool package.
func ToolInfo() permission.ToolInfo {
	return permission.ToolInfo{Name: ToolName, Risk: risk.Read, Kind: permission.KindRead}
}
