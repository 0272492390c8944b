package promcheck

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Checker checks that expressions name only series the collector exports,
// or that recording rules added to it produce, and only their labels and
// label values.
type Checker struct {
	metrics Metrics
}

// NewChecker knows the exported series of Catalog.
func NewChecker() *Checker {
	return &Checker{metrics: Exported()}
}

// Known reports whether a series name is exported or recorded.
func (c *Checker) Known(name string) bool {
	_, ok := c.metrics[name]
	return ok
}

// AddRecorded checks a recording rule's expression and makes its output
// known: with the labels of its by clauses (or, with none, the labels of
// the series it reads), those a one-to-many match keeps (ignoring (…) before
// group_left or group_right, and the labels these copy), and those
// label_replace and label_join write. A kept label with a closed set of
// values on the series read keeps that set.
func (c *Checker) AddRecorded(name, expr string) error {
	if err := c.Check(expr); err != nil {
		return err
	}
	a, err := Analyze(expr)
	if err != nil {
		return err
	}
	toks, err := tokenize(expr)
	if err != nil {
		return err
	}
	info := seriesInfo{labels: map[string]bool{}}
	// topk and bottomk select series whole: their by clause groups, it
	// does not aggregate labels away.
	if by := byLabels(toks); len(by) > 0 && !selectsWhole(toks) {
		for _, l := range by {
			info.labels[l] = true
		}
	} else {
		for _, s := range a.Selectors {
			for l := range c.metrics[s.Name].labels {
				info.labels[l] = true
			}
		}
	}
	for _, l := range keptLabels(toks) {
		info.labels[l] = true
	}
	for l := range info.labels {
		for _, s := range a.Selectors {
			if values, closed := c.metrics[s.Name].values[l]; closed {
				if info.values == nil {
					info.values = map[string][]string{}
				}
				info.values[l] = values
				break
			}
		}
	}
	c.metrics[name] = info
	return nil
}

// selectsWhole reports whether the expression is topk or bottomk, whose
// result keeps every label of the series it selects.
func selectsWhole(toks []token) bool {
	return len(toks) > 0 && toks[0].kind == tokIdent && (toks[0].text == "topk" || toks[0].text == "bottomk")
}

// byLabels returns the labels of every "by (…)" clause.
func byLabels(toks []token) []string {
	return clauseLabels(toks, func(i int) bool { return toks[i].text == "by" })
}

// keptLabels returns the labels a one-to-many match keeps beyond the by
// clauses (ignoring (…) followed by group_left or group_right, and the
// labels of group_left (…) and group_right (…)), and the destination labels
// of label_replace and label_join.
func keptLabels(toks []token) []string {
	out := clauseLabels(toks, func(i int) bool {
		switch toks[i].text {
		case "group_left", "group_right":
			return true
		case "ignoring":
			// The clause's closing parenthesis, then group_left or group_right.
			for j := i + 1; j < len(toks); j++ {
				if toks[j].text == ")" {
					return j+1 < len(toks) && (toks[j+1].text == "group_left" || toks[j+1].text == "group_right")
				}
			}
		}
		return false
	})
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind == tokIdent && (toks[i].text == "label_replace" || toks[i].text == "label_join") && toks[i+1].text == "(" {
			if dst, ok := secondArgument(toks, i+1); ok {
				out = append(out, dst)
			}
		}
	}
	return out
}

// secondArgument returns the string that is the second argument of the call
// whose "(" is toks[open].
func secondArgument(toks []token, open int) (string, bool) {
	depth := 0
	for j := open; j+1 < len(toks); j++ {
		switch toks[j].text {
		case "(", "{", "[":
			depth++
		case ")", "}", "]":
			depth--
			if depth == 0 {
				return "", false
			}
		case ",":
			if depth == 1 {
				if toks[j+1].kind != tokString {
					return "", false
				}
				return unquote(toks[j+1].text), true
			}
		}
	}
	return "", false
}

// clauseLabels returns the labels of every "KEYWORD (…)" clause whose
// keyword at toks[i] is chosen by is.
func clauseLabels(toks []token, is func(i int) bool) []string {
	var out []string
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind == tokIdent && toks[i+1].text == "(" && is(i) {
			for j := i + 2; j < len(toks) && toks[j].text != ")"; j++ {
				if toks[j].kind == tokIdent {
					out = append(out, toks[j].text)
				}
			}
		}
	}
	return out
}

// simpleAlternation matches regexps that are plain alternations of values;
// bucketAlternation, of bucket bounds.
var (
	simpleAlternation = regexp.MustCompile(`^[A-Za-z0-9_:]+(\|[A-Za-z0-9_:]+)*$`)
	bucketAlternation = regexp.MustCompile(`^(\+Inf|[0-9.]+)(\|(\+Inf|[0-9.]+))*$`)
)

// Check returns every problem of expr: unknown series, labels a series does
// not carry, values outside a label's closed set, bucket bounds that do not
// exist, grouping labels on none of the expression's series.
func (c *Checker) Check(expr string) error {
	a, err := Analyze(expr)
	if err != nil {
		return err
	}
	var errs []error
	present := map[string]bool{}
	for _, s := range a.Selectors {
		if s.Name == "" {
			errs = append(errs, fmt.Errorf("selector %s has no metric name", s))
			continue
		}
		info, ok := c.metrics[s.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no such metric (exported: %s)", s.Name, strings.Join(c.metrics.Names(), ", ")))
			continue
		}
		for l := range info.labels {
			present[l] = true
		}
		for _, m := range s.Matchers {
			if m.Label == "__name__" {
				continue
			}
			if !info.labels[m.Label] {
				errs = append(errs, fmt.Errorf("%s has no label %q (labels: %s)", s.Name, m.Label, strings.Join(c.metrics.Labels(s.Name), ", ")))
				continue
			}
			if strings.Contains(m.Value, "$") {
				continue // a Grafana variable
			}
			if err := checkValues(s.Name, m, info); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, l := range a.Grouping {
		if !present[l] {
			errs = append(errs, fmt.Errorf("grouping label %q is on none of the expression's series", l))
		}
	}
	return errors.Join(errs...)
}

// checkValues checks a matcher's values against a closed set, or a bucket
// bound against the histogram's bounds.
func checkValues(name string, m Matcher, info seriesInfo) error {
	var values []string
	switch {
	case m.Op == "=" || m.Op == "!=":
		values = []string{m.Value}
	case simpleAlternation.MatchString(m.Value), m.Label == "le" && bucketAlternation.MatchString(m.Value):
		values = strings.Split(m.Value, "|")
	default:
		return nil // a real regexp: nothing to enumerate
	}
	for _, v := range values {
		if m.Label == "le" {
			if !isBucketBound(v, info.buckets) {
				return fmt.Errorf("%s has no bucket le=%q (bounds: %v and +Inf)", name, v, info.buckets)
			}
			continue
		}
		allowed, closed := info.values[m.Label]
		if closed && !slices.Contains(allowed, v) {
			return fmt.Errorf("%s{%s%s%q}: %q is not a value of %s (values: %s)", name, m.Label, m.Op, m.Value, v, m.Label, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func isBucketBound(v string, bounds []float64) bool {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false
	}
	if math.IsInf(f, 1) {
		return true
	}
	return slices.Contains(bounds, f)
}
