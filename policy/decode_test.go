package policy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custom-agent/custom-agent/permission"
)

// TestReadSameRulesAsEncodingJSON: for an ordinary file the strict reader
// gives the rules encoding/json gives, and each rule's offset.
func TestReadSameRulesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	rules := []Rule{
		{ID: "npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow, Comment: "tests \"quoted\" \\ and\nnewline é \u2028"},
		{ID: "docs", Tool: "read_file", Path: "docs/**", Decision: permission.Allow},
		{ID: "gh", Tool: "mcp__github__create_issue", Args: map[string]string{"repo": "org/*", "title": "*"}, Decision: permission.Ask},
		{ID: "empty-args", Tool: "x", Args: map[string]string{}, Decision: permission.Deny},
		{ID: "web", Tool: "http_get", URL: "api.github.com", Decision: permission.Allow},
		{ID: "ex", Tool: "read_file", Path: "src/**", Decision: permission.Allow,
			Examples: &Examples{Match: []map[string]any{{"path": "src/a.go", "limit": 3.5, "n": nil, "l": []any{true, "x", -1e-3}}}, NotMatch: []map[string]any{{}}}},
	}
	indented, _ := json.MarshalIndent(File{Version: Version, Rules: rules}, "", "  ")
	compact, _ := json.Marshal(File{Version: Version, Rules: rules})
	docs := map[string][]byte{
		"indented":      indented,
		"compact":       compact,
		"builtin":       permission.BuiltinJSON(),
		"rules first":   []byte(`{"rules": [{"id": "a", "tool": "shell", "decision": "allow"}], "version": 1}`),
		"no rules":      []byte(`{"version": 1}`),
		"empty rules":   []byte(" \n{ \"version\" : 1 , \"rules\" : [ ] }\n"),
		"nulls":         []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "comment": null, "examples": null, "args": null, "decision": "allow"}]}`),
		"null examples": []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": null, "notMatch": [null, {}, {"o": {"q": [1, "s"]}, "e": {}}]}, "decision": "allow"}]}`),
		"escapes":       []byte(`{"version": 1, "rules": [{"id": "a\u00e9", "tool": "x", "command": "q\"}, {\ud83d\ude00", "decision": "allow"}, {"id": "b", "tool": "x", "path": "\\\"]}", "decision": "deny"}]}`),
	}
	for name, src := range docs {
		p := &parsed{path: "f", src: src}
		if err := p.read(); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var f File
		if err := json.Unmarshal(src, &f); err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		var got []Rule
		for _, e := range p.ents {
			got = append(got, e.Rule)
		}
		if diff := gocmp.Diff(f.Rules, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: rules differ (-encoding/json +strict):\n%s", name, diff)
		}
		for i, off := range p.offs {
			if src[off] != '{' || p.objs[i].Off != off {
				t.Errorf("%s: rule %d placed at %d (%q)", name, i, off, src[off:min(off+10, len(src))])
			}
		}
	}
}

// TestReadRefusesWhatCouldBeReadTwoWays: a file a second reader could take
// otherwise than this one (a repeated key: which one wins?; a key in other
// capitals, which encoding/json matches; bytes that are not UTF-8) is
// refused, with the place.
func TestReadRefusesWhatCouldBeReadTwoWays(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"repeated decision", `{"version": 1, "rules": [{"id": "a", "tool": "shell", "decision": "deny",` + "\n" + ` "decision": "allow"}]}`, `f:2:2: the key "decision" appears twice`},
		{"repeated arg", `{"version": 1, "rules": [{"id": "a", "tool": "x", "args": {"k": "1", "k": "2"}, "decision": "allow"}]}`, `f:1:70: the key "k" appears twice`},
		{"repeated in example", `{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": [{"p": 1, "p": 2}]}, "decision": "allow"}]}`, `the key "p" appears twice`},
		{"key in capitals", `{"version": 1, "rules": [{"id": "a", "tool": "shell", "Decision": "allow"}]}`, `f:1:55: rule "a": unknown field "Decision"`},
		{"top key in capitals", `{"Version": 1, "rules": []}`, `f:1:2: unknown field "Version"`},
		{"invalid UTF-8", "{\"version\": 1, \"rules\": [{\"id\": \"a\xff\", \"tool\": \"shell\", \"decision\": \"allow\"}]}", `f:1:35: invalid UTF-8`},
		{"rules null", `{"version": 1, "rules": null}`, `f:1:25: rules: null is not a list`},
		{"rule not an object", `{"version": 1, "rules": [3]}`, `f:1:26: rules[0]: number is not an object`},
		{"args not strings", `{"version": 1, "rules": [{"id": "a", "tool": "x", "args": {"n": 3}, "decision": "allow"}]}`, `f:1:65: rule "a": args.n: number is not a string`},
		{"example not an object", `{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": ["x"]}, "decision": "allow"}]}`, `rule "a": examples.match[0]: string is not an object`},
		{"number too large", `{"version": 1, "rules": [{"id": "a", "tool": "x", "decision": "allow", "examples": {"match": [{"n": 1e400}]}}]}`, `rule "a": examples.match[0]: 1e400 is out of the range`},
		{"version as float", `{"version": 1.0, "rules": []}`, `f:1:13: version: 1.0 is not a whole number`},
		{"version as string", `{"version": "1", "rules": []}`, `f:1:13: version: string is not a number`},
		{"not an object", `[]`, `f:1:1: a policy file is a JSON object, not a list`},
		{"trailing comma", `{"version": 1, "rules": [],}`, `f:1:28: invalid character '}'`},
		{"trailing data", `{"version": 1, "rules": []} {}`, `f:1:29: trailing data after the policy object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parse("f", []byte(tc.src), permission.LevelProject)
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse = %v, want a *policy.Error containing\n  %s", err, tc.want)
			}
		})
	}
}

// TestReadTrust: the trust file is read by the same strict reader, every
// error at its place.
func TestReadTrust(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct{ name, src, want string }{
		{"ok", `{"version": 1, "projects": [{"root": "/p"}], "rules": [{"root": "/q", "id": "a", "digest": "sha256:x"}]}`, ""},
		{"unknown field", `{"version": 1, "projects": [{"root": "/p", "all": true}]}`, `:1:44: projects[0]: unknown field "all"`},
		{"repeated key", `{"version": 1, "projects": [], "projects": [{"root": "/p"}]}`, `:1:32: the key "projects" appears twice`},
		{"wrong type", `{"version": 1, "rules": [{"root": "/q", "id": 3}]}`, `:1:47: rules[0].id: number is not a string`},
		{"version", `{"version": 2}`, `version: 2 is not supported`},
		{"relative root", `{"version": 1, "projects": [{"root": "p"}]}`, `projects: "p" is not an absolute path`},
	}
	for i, tc := range tests {
		path := filepath.Join(dir, strconv.Itoa(i)+".json")
		if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		tl, err := readTrust(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && (len(tl.Projects) != 1 || len(tl.Rules) != 1 || tl.Rules[0] != trustedRule{Root: "/q", ID: "a", Digest: "sha256:x"}):
			t.Errorf("%s: read %+v", tc.name, tl)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}
