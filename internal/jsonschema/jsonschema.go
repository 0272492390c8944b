// Package jsonschema checks a decoded YAML or JSON document against a JSON
// Schema: the keywords that a Helm chart's values.schema.json uses (Helm
// checks values against that file at install and template time), and those
// of a Kubernetes CRD's openAPIV3Schema (format int32 and int64, pattern,
// minimum, the x-kubernetes-* extensions). A keyword it does not implement
// is an error, never skipped, so that a schema can not pass by a constraint
// being ignored.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Schema is a parsed schema document.
type Schema struct {
	root map[string]any
}

// Parse reads a schema from JSON.
func Parse(raw []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &Schema{root: root}, nil
}

// FromMap takes a schema already decoded (from YAML, as CRDs are written).
func FromMap(root map[string]any) *Schema { return &Schema{root: root} }

// annotations carry no constraint on a document that is checked, not
// defaulted or merged: x-kubernetes-preserve-unknown-fields only stops
// pruning (a missing additionalProperties allows any key here anyway),
// x-kubernetes-int-or-string comes with the anyOf that checks it, and
// x-kubernetes-map-type says how a map merges.
var annotations = map[string]bool{
	"$schema": true, "$defs": true, "definitions": true, "title": true,
	"description": true, "default": true, "examples": true, "$comment": true,
	"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-int-or-string": true,
	"x-kubernetes-map-type": true,
}

// Validate returns every place where doc breaks the schema, as "path: problem",
// sorted; none when it conforms.
func (s *Schema) Validate(doc any) []string {
	var problems []string
	s.check(s.root, doc, "", &problems)
	sort.Strings(problems)
	return problems
}

func (s *Schema) check(schema map[string]any, v any, path string, problems *[]string) {
	add := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "(root)"
		}
		*problems = append(*problems, p+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := schema["$ref"].(string); ok {
		target, err := s.resolve(ref)
		if err != nil {
			add("%v", err)
			return
		}
		s.check(target, v, path, problems)
	}
	for key := range schema {
		switch key {
		case "$ref", "type", "properties", "patternProperties", "additionalProperties",
			"required", "enum", "const", "items", "anyOf", "oneOf", "allOf",
			"format", "pattern", "minimum", "x-kubernetes-list-type", "x-kubernetes-list-map-keys":
		default:
			if !annotations[key] {
				add("schema keyword %q is not implemented", key)
			}
		}
	}
	if t, ok := schema["type"]; ok && !hasType(t, v) {
		add("is %s, want %v", typeName(v), t)
		return
	}
	if e, ok := schema["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		add("%v is not one of %v", v, e)
	}
	if c, ok := schema["const"]; ok && !equal(c, v) {
		add("%v is not %v", v, c)
	}
	if f, ok := schema["format"].(string); ok {
		checkFormat(f, v, add)
	}
	if p, ok := schema["pattern"].(string); ok {
		if str, isStr := v.(string); isStr {
			if re, err := regexp.Compile(p); err != nil {
				add("pattern %q: %v", p, err)
			} else if !re.MatchString(str) {
				add("%q does not match %s", str, p)
			}
		}
	}
	if m, ok := number(schema["minimum"]); ok {
		if n, isNum := number(v); isNum && n < m {
			add("%v is below the minimum %v", v, m)
		}
	}
	if lt, ok := schema["x-kubernetes-list-type"].(string); ok {
		checkListType(lt, asSlice(schema["x-kubernetes-list-map-keys"]), v, add)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := schema[k].([]any)
		if !ok {
			continue
		}
		matched := 0
		for _, a := range alts {
			var sub []string
			s.check(asMap(a), v, path, &sub)
			if len(sub) == 0 {
				matched++
			}
		}
		if matched == 0 || (k == "oneOf" && matched > 1) {
			add("matches %d of the %d schemas of %s", matched, len(alts), k)
		}
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, a := range all {
			s.check(asMap(a), v, path, problems)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props := asMap(schema["properties"])
		patterns := asMap(schema["patternProperties"])
		for _, r := range asSlice(schema["required"]) {
			if _, ok := v[fmt.Sprint(r)]; !ok {
				add("%q is required", r)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := join(path, k)
			known := false
			if p, ok := props[k]; ok {
				known = true
				s.check(asMap(p), v[k], sub, problems)
			}
			for pattern, p := range patterns {
				re, err := regexp.Compile(pattern)
				if err != nil {
					add("patternProperties %q: %v", pattern, err)
					continue
				}
				if re.MatchString(k) {
					known = true
					s.check(asMap(p), v[k], sub, problems)
				}
			}
			if known {
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					add("%q is not allowed here (allowed: %s)", k, strings.Join(sortedKeys(props), ", "))
				}
			case map[string]any:
				s.check(ap, v[k], sub, problems)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range v {
				s.check(items, e, fmt.Sprintf("%s[%d]", path, i), problems)
			}
		}
	}
}

// checkFormat knows the formats of the schemas checked here; another is an
// error.
func checkFormat(format string, v any, add func(string, ...any)) {
	bits := map[string]float64{"int32": 32, "int64": 64}[format]
	if bits == 0 {
		add("format %q is not implemented", format)
		return
	}
	if n, ok := number(v); ok && (n < -math.Pow(2, bits-1) || n >= math.Pow(2, bits-1)) {
		add("%v is out of the range of %s", v, format)
	}
}

// checkListType: a "map" list has no two items with the same keys, a "set"
// no two equal items; "atomic" says only how the list merges.
func checkListType(listType string, keys []any, v any, add func(string, ...any)) {
	items, ok := v.([]any)
	if !ok {
		return
	}
	switch listType {
	case "atomic":
		return
	case "map", "set":
	default:
		add("x-kubernetes-list-type %q is not implemented", listType)
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		id := fmt.Sprint(item)
		if listType == "map" {
			m, _ := item.(map[string]any)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprint(m[fmt.Sprint(k)]))
			}
			id = strings.Join(parts, "/")
		}
		if j, dup := seen[id]; dup {
			add("items %d and %d have the same %s", j, i, map[bool]string{true: fmt.Sprint(keys), false: "value"}[listType == "map"])
		}
		seen[id] = i
	}
}

func (s *Schema) resolve(ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q: only references within the schema (#/...) are implemented", ref)
	}
	var cur any = s.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q does not resolve", ref)
	}
	return m, nil
}

func hasType(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return isType(t, v)
	case []any:
		return slices.ContainsFunc(t, func(x any) bool { s, _ := x.(string); return isType(s, v) })
	}
	return false
}

func isType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "integer":
		f, ok := number(v)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := number(v)
		return ok
	}
	return false
}

// number accepts what YAML and JSON decoders produce for numbers.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	if f, ok := number(v); ok {
		if f == math.Trunc(f) {
			return "an integer"
		}
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func equal(a, b any) bool {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asSlice(v any) []any { s, _ := v.([]any); return s }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
