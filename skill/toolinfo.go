package skill

import (
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/skill/toolinfo"
)

// ToolInfo is use_skill's metadata as the engine reads it (toolinfo.Info).
func ToolInfo() permission.ToolInfo { return toolinfo.Info() }
