package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// notLinked are the packages custom-agent-gate must not link, by import
// path prefix: what makes custom-agent's start slow (the model SDKs' and
// the store's package init, a 100 MB binary's page faults) and what check
// does not use.
var notLinked = []string{
	"github.com/openai/",
	"github.com/anthropics/",
	"github.com/modelcontextprotocol/",
	"github.com/coder/acp-go-sdk",
	"github.com/go-git/",
	"modernc.org/",
	"encoding/gob",
	"net/http",
	"github.com/custom-agent/custom-agent/model",
	"github.com/custom-agent/custom-agent/session",
	"github.com/custom-agent/custom-agent/executor",
	"github.com/custom-agent/custom-agent/eventlog",
	"github.com/custom-agent/custom-agent/event",
	"github.com/custom-agent/custom-agent/artifact",
	"github.com/custom-agent/custom-agent/approval",
	"github.com/custom-agent/custom-agent/mcp",
	"github.com/custom-agent/custom-agent/contextbuild",
	"github.com/custom-agent/custom-agent/tool",
	"github.com/custom-agent/custom-agent/tools",
	"github.com/google/jsonschema-go",
	// cobra and pflag, and what they bring: pflag links net (for its IP
	// flags), whose init and cgo resolver cost every start, and cobra
	// text/template, which keeps every exported method reachable.
	"github.com/spf13/",
	"text/template",
	// The YAML parser (package skill reads skills' front matter with it):
	// its init compiles regular expressions at every start. Policy and
	// check need only use_skill's name and metadata (skill/toolinfo).
	"go.yaml.in/",
}

// notLinkedExactly are packages forbidden by their exact path (not the
// packages under them: net/url and net/netip are small and used; the
// check and hook commands under app/ are the gate's own).
var notLinkedExactly = []string{"net", "github.com/custom-agent/custom-agent/app", "github.com/custom-agent/custom-agent/skill"}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	testenv.NeedProgram(t, "go")
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// linked reports the packages of ps that notLinked names.
func linked(ps []string) []string {
	var bad []string
	for _, p := range ps {
		if slices.Contains(notLinkedExactly, p) {
			bad = append(bad, p)
		}
		for _, prefix := range notLinked {
			if p == prefix || strings.HasPrefix(p, prefix+"/") || strings.HasSuffix(prefix, "/") && strings.HasPrefix(p, prefix) {
				bad = append(bad, p)
			}
		}
	}
	return bad
}

func TestLinksNoModelSDKNorStore(t *testing.T) {
	ps := deps(t, ".")
	if bad := linked(ps); len(bad) > 0 {
		t.Errorf("custom-agent-gate links what it must not:\n%s", strings.Join(bad, "\n"))
	}
	// It does link the gate, and the same list for custom-agent names
	// what custom-agent-gate leaves out, so the check above can fail.
	for _, want := range []string{"github.com/custom-agent/custom-agent/app/checkcmd", "github.com/custom-agent/custom-agent/permission"} {
		if !strings.Contains("\n"+strings.Join(ps, "\n")+"\n", "\n"+want+"\n") {
			t.Errorf("custom-agent-gate does not link %s", want)
		}
	}
	for _, want := range []string{"github.com/openai/openai-go/v3", "github.com/anthropics/anthropic-sdk-go/v2", "modernc.org/sqlite",
		"github.com/spf13/cobra", "github.com/spf13/pflag", "net", "text/template", "go.yaml.in/yaml/v3",
		"github.com/custom-agent/custom-agent/skill"} {
		if bad := linked(deps(t, "../custom-agent")); !strings.Contains("\n"+strings.Join(bad, "\n")+"\n", "\n"+want+"\n") {
			t.Errorf("the list does not catch %s, which custom-agent links", want)
		}
	}
}
