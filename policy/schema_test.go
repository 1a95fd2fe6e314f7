package policy_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/internal/jsonschema"
)

// TestSchema: the published JSON Schema accepts what the loader accepts in
// docs/reference/policy.md and rejects an unknown field.
func TestSchema(t *testing.T) {
	t.Parallel()
	c := jsonschema.NewCompiler()
	f, err := os.Open("../docs/reference/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("policy.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("../docs/reference/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	// The first JSON block of the reference is the format example.
	_, rest, _ := strings.Cut(string(md), "```json\n")
	example, _, _ := strings.Cut(rest, "```")
	for name, src := range map[string]string{"reference example": example} {
		var v any
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		w := newWorld(t)
		w.writeProject(t, src)
		w.open(t)
	}
	var bad any
	_ = json.Unmarshal([]byte(`{"version":1,"rules":[{"id":"a","tool":"shell","decision":"allow","comand":"ls"}]}`), &bad)
	if sch.Validate(bad) == nil {
		t.Error("the schema accepts an unknown field")
	}
}
