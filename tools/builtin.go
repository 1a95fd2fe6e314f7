// Package tools assembles the built-in tools of DESIGN.md §2 into a Router.
package tools

import (
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools/fs"
	"github.com/custom-agent/custom-agent/tools/output"
	"github.com/custom-agent/custom-agent/tools/proc"
	"github.com/custom-agent/custom-agent/tools/web"
)

// Builtin returns the built-in tools.
func Builtin() []tool.Tool {
	ts := fs.Tools()
	return append(ts, proc.NewShell(), proc.NewRunTests(), proc.NewDiagnostics(), web.NewGet(), web.NewPost(), output.New())
}

// NewRouter returns a router with every built-in tool registered.
func NewRouter() *tool.Router {
	r := tool.NewRouter()
	for _, t := range Builtin() {
		r.Register(t)
	}
	return r
}
