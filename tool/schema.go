package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// The drafts the validator implements, by their "$schema" value. A schema
// naming another draft (draft-04, draft-06, 2019-09) is refused at
// registration rather than checked by rules it was not written for.
var drafts = map[string]bool{
	"": true, // no $schema: 2020-12
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"https://json-schema.org/draft-07/schema#":      true,
}

// jsonTypes are the names "type" may hold.
var jsonTypes = map[string]bool{
	"null": true, "boolean": true, "object": true, "array": true,
	"number": true, "integer": true, "string": true,
}

// compileSchema reads a tool's argument schema and prepares it for
// validation. The schema must be a JSON object of type object, of a draft
// the validator implements, with no reference outside itself (nothing is
// loaded from the network or the disk), and name only JSON types.
func compileSchema(src string) (*jsonschema.Resolved, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("no argument schema")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		return nil, fmt.Errorf("schema is not a JSON Schema object: %w", err)
	}
	if s.Type != "object" {
		return nil, errors.New(`schema must be {"type": "object", …}`)
	}
	// The library accepts these, but Validate of a Resolved would then
	// fail every call; say so now, while the tool can be left out.
	if s.Schema = strings.TrimSpace(s.Schema); !drafts[s.Schema] {
		return nil, fmt.Errorf("schema declares %q; only JSON Schema draft 2020-12 and draft-07 are supported", s.Schema)
	}
	if checkTypes(&s, "#", false) != nil {
		// Again in a fixed order, to name the same place every time.
		return nil, checkTypes(&s, "#", true)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return rs, nil
}

// checkTypes refuses a "type" naming no JSON type (the library would
// compile it and then reject every value). With sorted false it visits the
// subschemas in any order, which is cheaper.
func checkTypes(s *jsonschema.Schema, at string, sorted bool) error {
	if s == nil {
		return nil
	}
	if s.Type != "" && !jsonTypes[s.Type] {
		return badType(at, s.Type)
	}
	for _, t := range s.Types {
		if !jsonTypes[t] {
			return badType(at, t)
		}
	}
	var err error
	each := func(name string, c *jsonschema.Schema) {
		if err == nil && c != nil {
			if sorted {
				name = at + "/" + name
			}
			err = checkTypes(c, name, sorted)
		}
	}
	eachMap := func(name string, m map[string]*jsonschema.Schema) {
		if !sorted {
			for _, c := range m {
				each(name, c)
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			each(name+"/"+k, m[k])
		}
	}
	eachList := func(name string, l []*jsonschema.Schema) {
		for i, c := range l {
			if sorted {
				each(name+"/"+strconv.Itoa(i), c)
			} else {
				each(name, c)
			}
		}
	}
	eachMap("properties", s.Properties)
	eachMap("patternProperties", s.PatternProperties)
	eachMap("$defs", s.Defs)
	eachMap("definitions", s.Definitions)
	eachMap("dependentSchemas", s.DependentSchemas)
	eachMap("dependencies", s.DependencySchemas)
	eachList("allOf", s.AllOf)
	eachList("anyOf", s.AnyOf)
	eachList("oneOf", s.OneOf)
	eachList("prefixItems", s.PrefixItems)
	eachList("items", s.ItemsArray)
	each("additionalProperties", s.AdditionalProperties)
	each("items", s.Items)
	each("additionalItems", s.AdditionalItems)
	each("not", s.Not)
	each("if", s.If)
	each("then", s.Then)
	each("else", s.Else)
	each("contains", s.Contains)
	each("propertyNames", s.PropertyNames)
	each("unevaluatedItems", s.UnevaluatedItems)
	each("unevaluatedProperties", s.UnevaluatedProperties)
	return err
}

func badType(at, t string) error {
	return fmt.Errorf("schema at %s: %q is not a JSON type (one of null, boolean, object, array, number, integer, string)", at, t)
}

// validate checks inst against the tool's schema and returns one line per
// failing field, naming the field and what was wrong, sorted; nil when
// inst is valid. The library stops at the first error and names schema
// paths, not fields, so a failing call is explained again here, field by
// field, from the schema itself (only on failure: a valid call costs one
// Validate).
func validate(rs *jsonschema.Resolved, inst any) (out []string) {
	err := safeValidate(rs, inst)
	if err == nil {
		return nil
	}
	out = explain(nil, rs.Schema(), inst)
	if len(out) == 0 {
		out = []string{"arguments: " + reason(err)}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// safeValidate turns a panic of the library (an internal assertion on a
// schema from a server we do not control) into an error: the call is
// refused, not the process.
func safeValidate(rs *jsonschema.Resolved, inst any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool's schema could not be checked: %v", p)
		}
	}()
	return rs.Validate(inst)
}

// explain says what is wrong with v at loc under s: a wrong type, each
// missing required field, each field the schema does not allow, then, for
// each field present, what is wrong with it. Where none of those is the
// problem, s is checked alone against v and the library's reason given.
// A subschema that cannot be checked alone (it refers to another part of
// the schema) gives nothing, and the caller falls back to the reason for
// the whole.
func explain(loc []string, s *jsonschema.Schema, v any) []string {
	if s == nil {
		return nil
	}
	where := "arguments"
	if len(loc) > 0 {
		where = strconv.Quote(strings.Join(loc, "."))
	}
	if want := types(s); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return isType(v, t) }) {
		return []string{fmt.Sprintf("%s: got %s, want %s", where, typeOf(v), strings.Join(want, " or "))}
	}
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				out = append(out, fmt.Sprintf("%s: missing (required)", strconv.Quote(strings.Join(append(slices.Clone(loc), name), "."))))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			at := append(slices.Clone(loc), k)
			if sub, ok := s.Properties[k]; ok {
				out = append(out, explain(at, sub, v[k])...)
				continue
			}
			if isFalse(s.AdditionalProperties) && len(s.PatternProperties) == 0 {
				out = append(out, fmt.Sprintf("%s: unknown field; the fields are %s", strconv.Quote(strings.Join(at, ".")), strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ")))
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				out = append(out, explain(append(slices.Clone(loc), strconv.Itoa(i)), s.Items, item)...)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if why := leaf(s, v); why != "" {
		return []string{where + ": " + why}
	}
	alone, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	if err := safeValidate(alone, v); err != nil {
		return []string{where + ": " + reason(err)}
	}
	return nil
}

// leaf says in words what is wrong with a number, a string or a value out
// of an enum, for the keywords a tool's schema uses most; "" when none of
// them is the problem.
func leaf(s *jsonschema.Schema, v any) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch v := v.(type) {
	case float64:
		switch {
		case s.Minimum != nil && v < *s.Minimum:
			return fmt.Sprintf("%s is less than the minimum %s", num(v), num(*s.Minimum))
		case s.Maximum != nil && v > *s.Maximum:
			return fmt.Sprintf("%s is more than the maximum %s", num(v), num(*s.Maximum))
		case s.ExclusiveMinimum != nil && v <= *s.ExclusiveMinimum:
			return fmt.Sprintf("%s is not more than the exclusive minimum %s", num(v), num(*s.ExclusiveMinimum))
		case s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum:
			return fmt.Sprintf("%s is not less than the exclusive maximum %s", num(v), num(*s.ExclusiveMaximum))
		}
	case string:
		n := utf8.RuneCountInString(v)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return fmt.Sprintf("%d characters, fewer than the minimum length %d", n, *s.MinLength)
		case s.MaxLength != nil && n > *s.MaxLength:
			return fmt.Sprintf("%d characters, more than the maximum length %d", n, *s.MaxLength)
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonschema.Equal(e, v) }) {
		allowed := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			b, _ := json.Marshal(e)
			allowed[i] = string(b)
		}
		got, _ := json.Marshal(v)
		return fmt.Sprintf("%s is not one of %s", got, strings.Join(allowed, ", "))
	}
	return ""
}

// reason is the library's message without its "validating <schema path>: "
// prefixes, which name a place in the schema, not in the arguments.
func reason(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "validating ") {
		_, rest, ok := strings.Cut(msg, ": ")
		if !ok {
			break
		}
		msg = rest
	}
	return msg
}

func types(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// isFalse reports whether s is the schema false, which the library reads
// as {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil {
		return false
	}
	return reflect.ValueOf(*s.Not).IsZero()
}

func isType(v any, t string) bool {
	switch t {
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	}
	return typeOf(v) == t
}

// typeOf names the JSON type of a value decoded by encoding/json.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
