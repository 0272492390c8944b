package promcheck

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Rule is a recording or alerting rule of a Prometheus rule file.
type Rule struct {
	Record      string            `yaml:"record"`
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// Name is the record or alert name.
func (r Rule) Name() string {
	if r.Record != "" {
		return r.Record
	}
	return r.Alert
}

// RuleGroup is a group of rules.
type RuleGroup struct {
	Name  string `yaml:"name"`
	Rules []Rule `yaml:"rules"`
}

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// ParseRules reads a rule file's content.
func ParseRules(data []byte) (*RuleFile, error) {
	var f RuleFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// LoadRules reads a rule file.
func LoadRules(path string) (*RuleFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseRules(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Rules lists every rule in file order.
func (f *RuleFile) Rules() []Rule {
	var out []Rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// templateQuery matches the query of an annotation template: a string (in
// backquotes or double quotes, often printf's format) piped to query, or
// query's argument.
var templateQuery = regexp.MustCompile(`(` + templateString + `)[^{}|]*\|\s*query\b|\bquery\s+(` + templateString + `)`)

const templateString = "`[^`]*`" + `|"(?:[^"\\]|\\.)*"`

// TemplateQueries lists the PromQL of the query calls of an annotation
// template, with each printf verb replaced by a placeholder label value.
func TemplateQueries(text string) []string {
	var out []string
	for _, m := range templateQuery.FindAllStringSubmatch(text, -1) {
		lit := m[1] + m[2]
		q := lit[1 : len(lit)-1]
		if lit[0] == '"' {
			q = strings.ReplaceAll(q, `\"`, `"`)
		}
		q = strings.NewReplacer("%q", `"x"`, "%s", "x", "%v", "x").Replace(q)
		out = append(out, q)
	}
	return out
}

// CheckRules checks every rule's expression in file order, learning each
// recorded series as it goes, then the queries of every alert's annotations,
// and returns a Checker that knows them all (for the dashboard's queries).
func CheckRules(f *RuleFile) (*Checker, error) {
	c := NewChecker()
	var errs []error
	for _, r := range f.Rules() {
		var err error
		if r.Record != "" {
			if c.Known(r.Record) {
				err = errors.New("recorded twice, or shadows an exported metric")
			} else {
				err = c.AddRecorded(r.Record, r.Expr)
			}
		} else {
			err = c.Check(r.Expr)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s: %w", r.Name(), err))
		}
	}
	for _, r := range f.Rules() {
		for key, text := range r.Annotations {
			for _, q := range TemplateQueries(text) {
				if err := c.Check(q); err != nil {
					errs = append(errs, fmt.Errorf("rule %s, annotation %s, query %s: %w", r.Name(), key, q, err))
				}
			}
		}
	}
	return c, errors.Join(errs...)
}
