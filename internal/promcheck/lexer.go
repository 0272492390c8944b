// Package promcheck reads the PromQL of the project's Prometheus rules and
// Grafana dashboard, checks every metric and label they name against what
// the collector exports, and rescales their time windows. It is a modest
// lexer, not a PromQL parser: Prometheus itself (promtool, and the live
// server of the end-to-end test) parses the expressions; this package only
// needs to find selectors, label matchers and grouping labels, and
// durations, in text that Prometheus accepts.
package promcheck

import (
	"fmt"
	"strings"
)

// tokenKind classifies a token.
type tokenKind int

const (
	tokIdent    tokenKind = iota // metric, label, function or keyword name
	tokString                    // "…", '…' or `…`, with its quotes
	tokNumber                    // a number or a duration (1h30m, 0.5, 1e3)
	tokVariable                  // a Grafana variable: $name, ${name}, [[name]]
	tokPunct                     // operators and brackets
)

// token is one lexeme of an expression; pos and end are byte offsets.
type token struct {
	kind     tokenKind
	text     string
	pos, end int
}

// tokenize splits a PromQL expression into tokens, dropping white space
// and # comments.
func tokenize(expr string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(expr) {
		c := expr[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
			continue
		case isIdentStart(c):
			for i < len(expr) && isIdentChar(expr[i]) {
				i++
			}
			toks = append(toks, token{tokIdent, expr[start:i], start, i})
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			// Numbers, durations (5m, 1h30m, 500ms) and exponents (1e-3).
			for i < len(expr) && (isDigit(expr[i]) || isLetter(expr[i]) || expr[i] == '.' ||
				((expr[i] == '-' || expr[i] == '+') && (expr[i-1] == 'e' || expr[i-1] == 'E') && !isDurationUnitRun(expr[start:i]))) {
				i++
			}
			toks = append(toks, token{tokNumber, expr[start:i], start, i})
		case c == '"' || c == '\'' || c == '`':
			i++
			for i < len(expr) && expr[i] != c {
				if expr[i] == '\\' && c != '`' {
					i++
				}
				i++
			}
			if i >= len(expr) {
				return nil, fmt.Errorf("unterminated string at offset %d", start)
			}
			i++
			toks = append(toks, token{tokString, expr[start:i], start, i})
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				for i < len(expr) && expr[i] != '}' {
					i++
				}
				i++
			} else {
				for i < len(expr) && isIdentChar(expr[i]) && expr[i] != ':' {
					i++
				}
			}
			toks = append(toks, token{tokVariable, expr[start:i], start, i})
		case c == '[' && strings.HasPrefix(expr[i:], "[[") && strings.Contains(expr[i:], "]]"):
			i += strings.Index(expr[i:], "]]") + 2
			toks = append(toks, token{tokVariable, expr[start:i], start, i})
		default:
			if op := matchOperator(expr[i:]); op != "" {
				i += len(op)
				toks = append(toks, token{tokPunct, op, start, i})
				continue
			}
			return nil, fmt.Errorf("unexpected %q at offset %d", c, i)
		}
	}
	return toks, nil
}

var operators = []string{"!=", "=~", "!~", "==", "<=", ">=", "(", ")", "{", "}", "[", "]", ",", ":", "=", "<", ">", "+", "-", "*", "/", "%", "^", "@"}

func matchOperator(s string) string {
	for _, op := range operators {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// isDurationUnitRun reports whether s looks like a duration so far (digits
// and unit letters), in which case an 'e' is not an exponent.
func isDurationUnitRun(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.ContainsRune("smhdwy", rune(s[i])) {
			return true
		}
	}
	return false
}

// Names may contain colons (recording rules) but, here, not start with
// one, so that the colon of a subquery ([1h:5m]) stays punctuation.
func isIdentStart(c byte) bool { return isLetter(c) || c == '_' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == ':' }
func isLetter(c byte) bool     { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// unquote returns a string token's content. Escapes other than \" \' \\
// are kept as written, which is enough for label values and regexps.
func unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	q := s[0]
	body := s[1 : len(s)-1]
	if q == '`' {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && i+1 < len(body) && (body[i+1] == q || body[i+1] == '\\') {
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String()
}
