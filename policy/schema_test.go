package policy_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchema: the published JSON Schema accepts what the loader accepts in
// docs/reference/policy.md and rejects an unknown field.
func TestSchema(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../docs/reference/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc jsonschema.Schema
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	// The validator checks only these drafts; it would refuse every value
	// of a schema declaring another.
	if doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("policy.schema.json declares %q, want draft 2020-12", doc.Schema)
	}
	sch, err := doc.Resolve(nil)
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
	if err := sch.Validate(bad); err == nil || !strings.Contains(err.Error(), "comand") {
		t.Errorf("the schema accepts an unknown field, or refuses it for another reason: %v", err)
	}
}
