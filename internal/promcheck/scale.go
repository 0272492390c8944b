package promcheck

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// ParseFactor reads a scale factor written as a decimal ("0.5") or a
// fraction ("1/120").
func ParseFactor(s string) (float64, error) {
	num, den, isFraction := strings.Cut(s, "/")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err == nil && isFraction {
		var d float64
		d, err = strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err == nil && d == 0 {
			err = fmt.Errorf("division by zero")
		}
		f /= d
	}
	if err != nil {
		return 0, fmt.Errorf("scale %q: %w", s, err)
	}
	if !(f > 0) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("scale %q: must be a positive number", s)
	}
	return f, nil
}

// ScaleDuration multiplies a Prometheus duration ("1h30m", "500ms") by
// factor, to the millisecond, and writes it back in Prometheus syntax.
func ScaleDuration(d string, factor float64) (string, error) {
	parsed, err := model.ParseDuration(d)
	if err != nil {
		return "", err
	}
	ms := math.Round(float64(time.Duration(parsed).Milliseconds()) * factor)
	if ms < 1 {
		return "", fmt.Errorf("%s scaled by %g is shorter than a millisecond", d, factor)
	}
	return model.Duration(time.Duration(ms) * time.Millisecond).String(), nil
}

// ScaleExpr multiplies every range ([5m]), subquery range and step
// ([1h:1m]) and offset (offset 1h) of a PromQL expression by factor,
// leaving everything else as written. Plain numbers, such as the 3600 of a
// per-hour rate, are not durations and stay.
func ScaleExpr(expr string, factor float64) (string, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	last := 0
	inBrackets := false
	for i, t := range toks {
		switch {
		case t.kind == tokPunct && t.text == "[":
			inBrackets = true
		case t.kind == tokPunct && t.text == "]":
			inBrackets = false
		}
		if t.kind != tokNumber {
			continue
		}
		prev := toks[max(i-1, 0)]
		isDuration := (inBrackets && prev.kind == tokPunct && (prev.text == "[" || prev.text == ":")) ||
			(prev.kind == tokIdent && prev.text == "offset")
		if !isDuration || i == 0 {
			continue
		}
		scaled, err := ScaleDuration(t.text, factor)
		if err != nil {
			return "", fmt.Errorf("offset %d: %w", t.pos, err)
		}
		b.WriteString(expr[last:t.pos])
		b.WriteString(scaled)
		last = t.end
	}
	b.WriteString(expr[last:])
	return b.String(), nil
}

// durationKeys are the rule-file keys whose values are durations.
var durationKeys = map[string]bool{"for": true, "keep_firing_for": true, "interval": true}

// ScaleRules rewrites a rule file with every window scaled by factor: the
// ranges and offsets of each expr, and each for:, keep_firing_for: and
// group interval:. Names, labels, annotations and comments stay, so a
// scaled file is the canonical one on another time scale, never a second
// copy to maintain.
func ScaleRules(data []byte, factor float64) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if err := scaleNode(&doc, factor); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func scaleNode(n *yaml.Node, factor float64) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			var err error
			switch {
			case key.Value == "expr" && val.Kind == yaml.ScalarNode:
				val.Value, err = ScaleExpr(val.Value, factor)
			case durationKeys[key.Value] && val.Kind == yaml.ScalarNode:
				val.Value, err = ScaleDuration(val.Value, factor)
			default:
				err = scaleNode(val, factor)
			}
			if err != nil {
				return fmt.Errorf("line %d: %s: %w", val.Line, key.Value, err)
			}
		}
		return nil
	}
	for _, c := range n.Content {
		if err := scaleNode(c, factor); err != nil {
			return err
		}
	}
	return nil
}
