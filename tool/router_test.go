package tool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

type fake struct{ info permission.ToolInfo }

func (f fake) Info() permission.ToolInfo { return f.info }
func (fake) Run(context.Context, Call, Output) (Result, error) {
	return Result{}, nil
}

func builtinRouter(t *testing.T) *Router {
	t.Helper()
	r := NewRouter()
	for _, info := range permission.Builtins() {
		r.Register(fake{info})
	}
	return r
}

func TestValidate(t *testing.T) {
	t.Parallel()
	r := builtinRouter(t)
	tests := []struct {
		name, tool, args string
		want             []string // substrings of the problems; nil = valid
	}{
		{"valid read", "read_file", `{"path":"README.md","offset":0,"limit":10}`, nil},
		{"missing required", "read_file", `{}`, []string{"path", "missing"}},
		{"wrong type", "read_file", `{"path":3}`, []string{`"path"`, "string"}},
		{"below minimum", "read_file", `{"path":"x","limit":0}`, []string{`"limit"`, "minimum"}},
		{"unknown field", "shell", `{"command":"ls","sudo":true}`, []string{"sudo"}},
		{"not an object", "shell", `["ls"]`, []string{"object"}},
		{"not JSON", "shell", `{"command":`, []string{"not valid JSON"}},
		{"empty args become {}", "list_files", ``, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args, err := r.Validate(tc.tool, []byte(tc.args))
			if tc.want == nil {
				if err != nil || args == nil {
					t.Fatalf("Validate = %v, %v; want valid", args, err)
				}
				return
			}
			var ae *ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("Validate error %v is not an ArgsError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	r := builtinRouter(t)
	r.Register(fake{permission.ToolInfo{Name: "mcp__github__create_issue", Namespace: "mcp__github", Risk: risk.Network, Schema: `{"type":"object"}`}})
	if _, err := r.Resolve("shell"); err != nil {
		t.Fatal(err)
	}
	_, err := r.Resolve("run_shell")
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "read_file") {
		t.Fatalf("unknown tool: %v", err)
	}
	_, err = r.Resolve("mcp__github__delete_repo")
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "mcp__github__create_issue") || strings.Contains(err.Error(), "read_file") {
		t.Fatalf("unknown tool of a known server should list that server's tools: %v", err)
	}
	if got := len(r.Infos()); got != 11 {
		t.Fatalf("Infos: %d tools", got)
	}
}

func TestRegisterPanicsOnMistakes(t *testing.T) {
	t.Parallel()
	ok := permission.ToolInfo{Name: "t", Risk: risk.Read, Schema: `{"type":"object"}`}
	tests := map[string]func(*permission.ToolInfo){
		"no name":          func(i *permission.ToolInfo) { i.Name = "" },
		"no schema":        func(i *permission.ToolInfo) { i.Schema = "" },
		"schema not json":  func(i *permission.ToolInfo) { i.Schema = "{" },
		"schema not obj":   func(i *permission.ToolInfo) { i.Schema = `{"type":"string"}` },
		"bad schema":       func(i *permission.ToolInfo) { i.Schema = `{"type":"object","properties":{"a":{"type":"nope"}}}` },
		"no risk":          func(i *permission.ToolInfo) { i.Risk = 0 },
		"wrong namespace":  func(i *permission.ToolInfo) { i.Namespace = "mcp__x" },
		"registered twice": func(*permission.ToolInfo) {},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := NewRouter()
			info := ok
			mutate(&info)
			if name == "registered twice" {
				r.Register(fake{info})
			}
			defer func() {
				if recover() == nil {
					t.Fatal("Register did not panic")
				}
			}()
			r.Register(fake{info})
		})
	}
}
