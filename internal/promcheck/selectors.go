package promcheck

import (
	"fmt"
	"strings"
)

// Matcher is one label matcher of a selector: label op "value".
type Matcher struct {
	Label, Op, Value string
}

// Selector is a series selector: a metric name (empty for {__name__=…}
// selectors, whose name is then a matcher) and its label matchers.
type Selector struct {
	Name     string
	Matchers []Matcher
}

func (s Selector) String() string {
	var parts []string
	for _, m := range s.Matchers {
		parts = append(parts, fmt.Sprintf("%s%s%q", m.Label, m.Op, m.Value))
	}
	return s.Name + "{" + strings.Join(parts, ",") + "}"
}

// Analysis is what an expression names.
type Analysis struct {
	Selectors []Selector
	// Grouping holds the labels of by, without, on, ignoring, group_left
	// and group_right clauses.
	Grouping []string
}

// Keywords that take a parenthesised list of label names.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// Other identifiers that are not metric names when not followed by "(".
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"Inf": true, "inf": true, "NaN": true, "nan": true, "start": true, "end": true,
}

var aggregators = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
}

// Analyze finds the selectors and grouping labels of a PromQL expression.
func Analyze(expr string) (Analysis, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return Analysis{}, err
	}
	var a Analysis
	next := func(i int) token {
		if i+1 < len(toks) {
			return toks[i+1]
		}
		return token{}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokIdent && groupingKeywords[t.text]:
			if n := next(i); n.kind == tokPunct && n.text == "(" {
				j := i + 2
				for ; j < len(toks) && toks[j].text != ")"; j++ {
					switch {
					case toks[j].kind == tokIdent:
						a.Grouping = append(a.Grouping, toks[j].text)
					case toks[j].text == ",":
					default:
						return a, fmt.Errorf("unexpected %q in %s (…) at offset %d", toks[j].text, t.text, toks[j].pos)
					}
				}
				i = j
			}
		case t.kind == tokIdent && keywords[t.text]:
		case t.kind == tokIdent && aggregators[t.text] && (next(i).text == "by" || next(i).text == "without"):
		case t.kind == tokIdent && next(i).kind == tokPunct && next(i).text == "(":
			// A function or aggregation call.
		case t.kind == tokIdent:
			sel := Selector{Name: t.text}
			if n := next(i); n.kind == tokPunct && n.text == "{" {
				ms, end, err := readMatchers(toks, i+1)
				if err != nil {
					return a, err
				}
				sel.Matchers, i = ms, end
			}
			a.Selectors = append(a.Selectors, sel)
		case t.kind == tokPunct && t.text == "{":
			ms, end, err := readMatchers(toks, i)
			if err != nil {
				return a, err
			}
			sel := Selector{Matchers: ms}
			for _, m := range ms {
				if m.Label == "__name__" && m.Op == "=" {
					sel.Name = m.Value
				}
			}
			a.Selectors = append(a.Selectors, sel)
			i = end
		}
	}
	return a, nil
}

// readMatchers reads label matchers from the "{" at toks[open] and returns
// them with the index of the closing "}".
func readMatchers(toks []token, open int) ([]Matcher, int, error) {
	var ms []Matcher
	i := open + 1
	for i < len(toks) && toks[i].text != "}" {
		if toks[i].text == "," {
			i++
			continue
		}
		if i+2 >= len(toks) || toks[i].kind != tokIdent || toks[i+1].kind != tokPunct || toks[i+2].kind != tokString {
			return nil, 0, fmt.Errorf("malformed label matcher at offset %d", toks[i].pos)
		}
		op := toks[i+1].text
		if op != "=" && op != "!=" && op != "=~" && op != "!~" {
			return nil, 0, fmt.Errorf("unknown matcher operator %q at offset %d", op, toks[i+1].pos)
		}
		ms = append(ms, Matcher{Label: toks[i].text, Op: op, Value: unquote(toks[i+2].text)})
		i += 3
	}
	if i >= len(toks) {
		return nil, 0, fmt.Errorf("unclosed { at offset %d", toks[open].pos)
	}
	return ms, i, nil
}
