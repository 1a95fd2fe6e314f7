package jsonschema

import (
	"errors"
	"strings"
	"testing"
)

// compiledAtStart records whether the meta-schemas were compiled when the
// package's init functions ran (this file sorts after every other, so its
// init runs last).
var compiledAtStart bool

func init() { compiledAtStart = Draft2020.sch != nil || Draft7.sch != nil }

// TestDraftsCompiledLazily: starting a program costs nothing; the first
// Compiler has every draft's meta-schema and checks schemas against it.
func TestDraftsCompiledLazily(t *testing.T) {
	if compiledAtStart {
		t.Fatal("the meta-schemas were compiled during package init")
	}
	for _, tc := range []struct {
		name, schema string
		wantErr      bool
	}{
		{"valid 2020-12", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, false},
		{"type not a string", `{"type":3}`, true},
		{"draft-07 minimum not a number", `{"$schema":"http://json-schema.org/draft-07/schema#","minimum":"x"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := UnmarshalJSON(strings.NewReader(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			c := NewCompiler()
			if err := c.AddResource("t.json", doc); err != nil {
				t.Fatal(err)
			}
			_, err = c.Compile("t.json")
			var se *SchemaValidationError
			switch {
			case tc.wantErr && !errors.As(err, &se):
				t.Fatalf("Compile(%s) = %v, want a SchemaValidationError from the meta-schema", tc.schema, err)
			case !tc.wantErr && err != nil:
				t.Fatalf("Compile(%s): %v", tc.schema, err)
			}
		})
	}
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.sch == nil {
			t.Errorf("draft %d has no meta-schema after NewCompiler", d.version)
		}
	}
}
