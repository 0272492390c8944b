package jsonschema

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const testSchema = `{
  "$schema": "http://json-schema.org/schema#",
  "$defs": {"intOrString": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
  "type": "object",
  "additionalProperties": false,
  "required": ["mode"],
  "properties": {
    "mode": {"type": "string", "enum": ["deployment", "daemonset"]},
    "image": {
      "type": "object",
      "additionalProperties": false,
      "properties": {"repository": {"type": "string"}, "tag": {"type": "string"}}
    },
    "replicas": {"type": "integer"},
    "cpu": {"type": ["string", "integer"]},
    "surge": {"$ref": "#/$defs/intOrString"},
    "on": {"const": true},
    "hook": {"oneOf": [{"required": ["exec"]}, {"required": ["httpGet"]}]},
    "ports": {
      "type": "object",
      "patternProperties": {".*": {
        "type": "object", "additionalProperties": false, "required": ["enabled"],
        "properties": {"enabled": {"type": "boolean"}, "containerPort": {"type": "integer"}}
      }}
    },
    "args": {"type": "array", "items": {"type": "string"}},
    "free": {"type": "object"}
  }
}`

func TestValidate(t *testing.T) {
	s, err := Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, doc string
		want      []string // substrings, one per problem, in order
	}{
		{"conforms", `
mode: deployment
image: {repository: r, tag: "1.0"}
replicas: 2
cpu: 500m
surge: 25%
on: true
hook: {exec: {}}
ports: {otlp: {enabled: true, containerPort: 4317}, extra: {enabled: false}}
args: [a, b]
free: {anything: [1, 2]}
`, nil},
		{"integer from JSON", `{"mode": "deployment", "replicas": 2.0, "cpu": 1}`, nil},
		{"missing required", `image: {}`, []string{`(root): "mode" is required`}},
		{"unknown key", `{mode: deployment, imgae: {}}`, []string{`(root): "imgae" is not allowed here`}},
		{"unknown nested key", `{mode: deployment, image: {repo: x}}`, []string{`image: "repo" is not allowed here (allowed: repository, tag)`}},
		{"wrong type", `{mode: deployment, image: {tag: 1.5}}`, []string{"image.tag: is a number, want string"}},
		{"not an integer", `{mode: deployment, replicas: 2.5}`, []string{"replicas: is a number, want integer"}},
		{"type list", `{mode: deployment, cpu: true}`, []string{"cpu: is a boolean, want [string integer]"}},
		{"enum", `{mode: sidecar}`, []string{"mode: sidecar is not one of [deployment daemonset]"}},
		{"const", `{mode: deployment, on: false}`, []string{"on: false is not true"}},
		{"ref", `{mode: deployment, surge: [1]}`, []string{"surge: matches 0 of the 2 schemas of anyOf"}},
		{"oneOf none", `{mode: deployment, hook: {}}`, []string{"hook: matches 0 of the 2 schemas of oneOf"}},
		{"oneOf both", `{mode: deployment, hook: {exec: {}, httpGet: {}}}`, []string{"hook: matches 2 of the 2 schemas of oneOf"}},
		{"pattern properties", `{mode: deployment, ports: {otlp: {containerPort: "4317"}}}`, []string{
			"ports.otlp.containerPort: is a string, want integer", `ports.otlp: "enabled" is required`}},
		{"items", `{mode: deployment, args: [a, 1]}`, []string{"args[1]: is an integer, want string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc any
			if err := yaml.Unmarshal([]byte(tc.doc), &doc); err != nil {
				t.Fatal(err)
			}
			got := s.Validate(doc)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d is %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// The keywords and extensions of a Kubernetes CRD's openAPIV3Schema.
func TestKubernetesExtensions(t *testing.T) {
	var root map[string]any
	if err := yaml.Unmarshal([]byte(`
type: object
properties:
  replicas: {type: integer, format: int32}
  version: {type: integer, minimum: 1}
  memory:
    anyOf: [{type: integer}, {type: string}]
    pattern: ^[0-9]+(Mi|Gi)?$
    x-kubernetes-int-or-string: true
  env:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items: {type: object, required: [name], properties: {name: {type: string}}}
  groups: {type: array, x-kubernetes-list-type: set, items: {type: integer}}
  args: {type: array, x-kubernetes-list-type: atomic, items: {type: string}}
  config: {type: object, x-kubernetes-preserve-unknown-fields: true, x-kubernetes-map-type: atomic}
`), &root); err != nil {
		t.Fatal(err)
	}
	s := FromMap(root)
	for doc, want := range map[string]string{
		`{replicas: 2, version: 3, memory: 1Gi, env: [{name: a}, {name: b}], groups: [1, 2], args: [x, x], config: {any: 1}}`: "",
		`{replicas: 3000000000}`:        "replicas: 3000000000 is out of the range of int32",
		`{version: 0}`:                  "version: 0 is below the minimum 1",
		`{memory: 1GB}`:                 `memory: "1GB" does not match`,
		`{env: [{name: a}, {name: a}]}`: "env: items 0 and 1 have the same [name]",
		`{groups: [1, 1]}`:              "groups: items 0 and 1 have the same value",
	} {
		var d any
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(s.Validate(d), "\n")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: problems %q, want %q", doc, got, want)
		}
	}
}

// A keyword the validator does not implement fails the check instead of
// being skipped, and so does a reference it cannot follow.
func TestUnimplementedIsAnError(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type": "string", "maxLength": 3}`: `schema keyword "maxLength" is not implemented`,
		`{"$ref": "other.json#/x"}`:          `only references within the schema`,
		`{"$ref": "#/$defs/missing"}`:        `does not resolve`,
		`{"format": "date-time"}`:            `format "date-time" is not implemented`,
	} {
		s, err := Parse([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		got := s.Validate("abcd")
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("%s: problems %q, want %q", schema, got, want)
		}
	}
}
