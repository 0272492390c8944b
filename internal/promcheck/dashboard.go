package promcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// DashboardQuery is a PromQL query of a Grafana dashboard: a panel's
// target, or a query variable's label_values(…).
type DashboardQuery struct {
	Panel    string // panel title, or "variable NAME"
	Expr     string
	Variable bool
}

// grafanaDashboard is the part of a dashboard's JSON model read here.
type grafanaDashboard struct {
	Panels      []grafanaPanel `json:"panels"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			// The query of a Prometheus annotation: target.expr, or the
			// legacy expr Grafana moves there.
			Expr   string `json:"expr"`
			Target struct {
				Expr string `json:"expr"`
			} `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // of a collapsed row
}

// DashboardQueries lists every PromQL query of a dashboard's JSON.
func DashboardQueries(data []byte) ([]DashboardQuery, error) {
	var d grafanaDashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	var out []DashboardQuery
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if t.Expr != "" {
					out = append(out, DashboardQuery{Panel: p.Title, Expr: t.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, ok := v.Query.(string)
		if !ok {
			if m, isMap := v.Query.(map[string]any); isMap {
				q, _ = m["query"].(string)
			}
		}
		if q != "" {
			out = append(out, DashboardQuery{Panel: "variable " + v.Name, Expr: q, Variable: true})
		}
	}
	return out, nil
}

// DashboardAnnotations lists the PromQL queries of a dashboard's
// annotations (Panel is "annotation NAME"). They are apart from
// DashboardQueries because an annotation returns data only around the
// events it marks.
func DashboardAnnotations(data []byte) ([]DashboardQuery, error) {
	var d grafanaDashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	var out []DashboardQuery
	for _, a := range d.Annotations.List {
		for _, expr := range []string{a.Target.Expr, a.Expr} {
			if expr != "" {
				out = append(out, DashboardQuery{Panel: "annotation " + a.Name, Expr: expr})
			}
		}
	}
	return out, nil
}

// ParseLabelValues splits a Grafana label_values(selector, label) variable
// query.
func ParseLabelValues(q string) (selector, label string, err error) {
	q = strings.TrimSpace(q)
	if !strings.HasPrefix(q, "label_values(") || !strings.HasSuffix(q, ")") {
		return "", "", fmt.Errorf("%q is not label_values(selector, label)", q)
	}
	body := q[len("label_values(") : len(q)-1]
	i := strings.LastIndex(body, ",")
	if i < 0 {
		return "", "", fmt.Errorf("%q has no label", q)
	}
	return strings.TrimSpace(body[:i]), strings.TrimSpace(body[i+1:]), nil
}

// CheckDashboard checks every query of a dashboard with c: each panel
// query, each variable's selector and label, and each annotation's query.
func (c *Checker) CheckDashboard(data []byte) error {
	queries, err := DashboardQueries(data)
	if err != nil {
		return err
	}
	if len(queries) == 0 {
		return errors.New("the dashboard has no queries")
	}
	annotations, err := DashboardAnnotations(data)
	if err != nil {
		return err
	}
	queries = append(queries, annotations...)
	var errs []error
	for _, q := range queries {
		expr := q.Expr
		if q.Variable {
			sel, label, err := ParseLabelValues(q.Expr)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", q.Panel, err))
				continue
			}
			// "sum by (label) (selector)" checks both.
			expr = "sum by (" + label + ") (" + sel + ")"
		}
		if err := c.Check(expr); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.Panel, err))
		}
	}
	return errors.Join(errs...)
}
