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
	if got := len(r.Infos()); got != 12 {
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

// A control character in a file path is refused before the engine judges
// the call (issue 9 §3): a NUL after `.env` names .env for the kernel.
func TestValidateControlCharacters(t *testing.T) {
	t.Parallel()
	r := builtinRouter(t)
	refused := []struct{ tool, args, arg, char string }{
		{"read_file", `{"path":".env\u0000.txt"}`, `"path"`, "NUL"},
		{"read_file", `{"path":"src/a\nb.go"}`, `"path"`, "newline"},
		{"read_file", `{"path":"a\u001b]0;title\u0007.txt"}`, `"path"`, "escape"},
		{"read_file", `{"path":"README\u007f.md"}`, `"path"`, `\x7f`},
		{"list_files", `{"path":"src\u0000"}`, `"path"`, "NUL"},
		{"list_files", `{"path":"src","glob":"*.go\u0000"}`, `"glob"`, "NUL"},
		{"search_text", `{"pattern":"x","path":".env\u0000"}`, `"path"`, "NUL"},
		{"search_text", `{"pattern":"x","glob":"**/*\t.go"}`, `"glob"`, "tab"},
		{"write_file", `{"path":"notes\r.txt","content":"x"}`, `"path"`, "carriage return"},
		{"get_diagnostics", `{"path":"pkg\u0000/../.."}`, `"path"`, "NUL"},
		{"run_tests", `{"path":"./...\u0001"}`, `"path"`, `\x01`},
		{"shell", `{"command":"ls","cwd":"/tmp\u0000/x"}`, `"cwd"`, "NUL"},
		{"apply_patch", `{"patch":"--- a/x.txt\n+++ b/x\u0001.txt\n@@ -1 +1 @@\n-a\n+b\n"}`, `"patch"`, `\x01`},
		{"apply_patch", `{"patch":"diff --git \"a/.env\\000.txt\" \"b/.env\\000.txt\"\n--- \"a/.env\\000.txt\"\n+++ \"b/.env\\000.txt\"\n@@ -1 +1 @@\n-a\n+b\n"}`, `"patch"`, "NUL"},
		{"apply_patch", `{"patch":"*** Begin Patch\n*** Add File: evil\u001b[2K.txt\n+x\n*** End Patch\n"}`, `"patch"`, "escape"},
	}
	for _, tc := range refused {
		_, err := r.Validate(tc.tool, []byte(tc.args))
		var ae *ArgsError
		if !errors.As(err, &ae) {
			t.Errorf("%s %s: Validate error %v, want an ArgsError", tc.tool, tc.args, err)
			continue
		}
		msg := err.Error()
		for _, w := range []string{tc.arg, tc.char, "control character", "invalid arguments for " + tc.tool} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %s: error %q does not mention %q", tc.tool, tc.args, msg, w)
			}
		}
		if strings.ContainsAny(msg, "\x00\x01\x1b\x7f\r") {
			t.Errorf("%s: the error %q carries the control character itself", tc.tool, msg)
		}
	}
	// Control characters where they belong are fine: file content, a
	// command (the shell analyser judges it), a search pattern, the
	// content lines of a patch, and non-ASCII names.
	valid := []struct{ tool, args string }{
		{"write_file", `{"path":"notes.txt","content":"a\tb\r\n\u0000"}`},
		{"search_text", `{"pattern":"\t\\x00","path":"src"}`},
		{"shell", `{"command":"printf 'a\\tb\\n'"}`},
		{"apply_patch", `{"patch":"--- a/x.txt\t2024-01-01\n+++ b/x.txt\t2024-01-01\n@@ -1 +1 @@\n-a\tb\r\n+b\u0001\n"}`},
		{"read_file", `{"path":"résumé/über café.txt"}`},
	}
	for _, tc := range valid {
		if _, err := r.Validate(tc.tool, []byte(tc.args)); err != nil {
			t.Errorf("%s %s: Validate = %v, want valid", tc.tool, tc.args, err)
		}
	}
}

// A schema of a server's tool, checked field by field: each problem names
// the field (nested fields joined with ".") and what was wrong.
func TestValidateMessages(t *testing.T) {
	t.Parallel()
	r := NewRouter()
	r.Register(fake{permission.ToolInfo{Name: "mcp__s__t", Namespace: "mcp__s", Risk: risk.Network, Schema: `{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"required": ["repo"],
		"additionalProperties": false,
		"properties": {
			"repo": {"type": "object", "required": ["owner"], "properties": {"owner": {"type": "string", "minLength": 1}}},
			"labels": {"type": "array", "items": {"type": "string", "maxLength": 3}},
			"state": {"enum": ["open", "closed"]},
			"count": {"type": "integer", "maximum": 10},
			"ref": {"$ref": "#/definitions/sha"},
			"either": {"anyOf": [{"type": "string"}, {"type": "number"}]}
		},
		"definitions": {"sha": {"type": "string", "pattern": "^[0-9a-f]{40}$"}}
	}`}})
	tests := []struct {
		name, args string
		want       []string // the problems, in full
	}{
		{"nested missing", `{"repo":{}}`, []string{`"repo.owner": missing (required)`}},
		{"nested too short", `{"repo":{"owner":""}}`, []string{`"repo.owner": 0 characters, fewer than the minimum length 1`}},
		{"item", `{"repo":{"owner":"a"},"labels":["ok","long"]}`, []string{`"labels.1": 4 characters, more than the maximum length 3`}},
		{"enum", `{"repo":{"owner":"a"},"state":"merged"}`, []string{`"state": "merged" is not one of "open", "closed"`}},
		{"integer", `{"repo":{"owner":"a"},"count":1.5}`, []string{`"count": got number, want integer`}},
		{"maximum", `{"repo":{"owner":"a"},"count":11}`, []string{`"count": 11 is more than the maximum 10`}},
		{"several", `{"count":"x","extra":1}`, []string{`"count": got string, want integer`, `"extra": unknown field; the fields are count, either, labels, ref, repo, state`, `"repo": missing (required)`}},
		{"anyOf", `{"repo":{"owner":"a"},"either":true}`, []string{`"either": anyOf: did not validate`}},
		// A $ref cannot be checked alone; the library's reason for the whole is given.
		{"ref", `{"repo":{"owner":"a"},"ref":"main"}`, []string{`arguments: pattern: "main" does not match regular expression`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := r.Validate("mcp__s__t", []byte(tc.args))
			var ae *ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("Validate error %v is not an ArgsError", err)
			}
			if len(ae.Problems) != len(tc.want) {
				t.Fatalf("problems %q, want %q", ae.Problems, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(ae.Problems[i], w) {
					t.Errorf("problem %q, want %q", ae.Problems[i], w)
				}
			}
		})
	}
	if _, err := r.Validate("mcp__s__t", []byte(`{"repo":{"owner":"a"},"labels":["x"],"state":"open","count":3,"ref":"0123456789abcdef0123456789abcdef01234567","either":2}`)); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
}

// A schema the router cannot check is an error of Add wrapping ErrBadTool,
// saying why, and the tool is left out (an MCP server's schema is not ours).
func TestAddRefusesSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema, want string }{
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, "draft-04"},
		{"2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`, "2019-09"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.invalid/a.json"}}}`, "does not compile"},
		{"missing ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}}`, "does not compile"},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, "pattern"},
		{"bad type", `{"type":"object","properties":{"a":{"items":{"type":"str"}}}}`, `#/properties/a/items: "str" is not a JSON type`},
		{"keyword of the wrong kind", `{"type":"object","minProperties":"one"}`, "not a JSON Schema"},
		{"not an object", `[]`, "not a JSON Schema object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := NewRouter()
			err := r.Add(fake{permission.ToolInfo{Name: "mcp__s__t", Namespace: "mcp__s", Risk: risk.Network, Schema: tc.schema}})
			if !errors.Is(err, ErrBadTool) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mcp__s__t") {
				t.Fatalf("Add error %v, want ErrBadTool naming the tool and %q", err, tc.want)
			}
			if len(r.Names()) != 0 {
				t.Fatalf("the tool was registered: %v", r.Names())
			}
		})
	}
}
