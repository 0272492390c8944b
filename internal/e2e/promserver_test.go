package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// prometheusBinary finds the Prometheus server (Debian package
// prometheus). Under CI it must be there, since .ci/run installs it; on a
// developer's machine the test is skipped with a message instead.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("prometheus")
	if err == nil {
		return path
	}
	if inCI() {
		t.Fatal("prometheus not found: .ci/run installs the Debian package prometheus")
	}
	t.Skip("prometheus not found; apt-get install prometheus to run the live rules, dashboard and exemplar tests")
	return ""
}

// promServer is a Prometheus server running as a child process.
type promServer struct {
	url string
}

// startPrometheus runs Prometheus with the given prometheus.yml content and
// extra files beside it (rule files), on a free port, and waits until it is
// ready.
func startPrometheus(t *testing.T, bin, config string, files map[string][]byte, flags ...string) *promServer {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		writeFile(t, dir, name, string(data))
	}
	cfg := writeFile(t, dir, "prometheus.yml", config)
	port := freePort(t)
	argv := append([]string{bin,
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:" + port,
		"--log.level=warn",
	}, flags...)
	p := &promServer{url: "http://127.0.0.1:" + port}
	startProcess(t, "prometheus", argv, nil, p.url+"/-/ready")
	return p
}

// apiResponse is the envelope of every Prometheus API answer.
type apiResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

func (p *promServer) get(path string, params url.Values) (json.RawMessage, error) {
	resp, err := http.Get(p.url + path + "?" + params.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, body, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %s: %s: %s", path, params.Encode(), r.ErrorType, r.Error)
	}
	return r.Data, nil
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string
	Value  float64
}

// query evaluates an instant query now. A parse error is an error.
func (p *promServer) query(expr string) ([]sample, error) {
	data, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	var res struct {
		ResultType string `json:"resultType"`
		Result     json.RawMessage
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	switch res.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(res.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]sample, 0, len(vec))
		for _, v := range vec {
			s, _ := v.Value[1].(string)
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, sample{Metric: v.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(res.Result, &v); err != nil {
			return nil, err
		}
		s, _ := v[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		return []sample{{Value: f}}, err
	default:
		return nil, fmt.Errorf("result type %s", res.ResultType)
	}
}

// value evaluates a query that must return exactly one sample.
func (p *promServer) value(t *testing.T, expr string) float64 {
	t.Helper()
	s, err := p.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 {
		t.Fatalf("%s: %d samples, want 1: %v", expr, len(s), s)
	}
	return s[0].Value
}

// activeAlert is an alert Prometheus holds as pending or firing.
type activeAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
	Value       string            `json:"value"`
}

func (p *promServer) alerts() ([]activeAlert, error) {
	data, err := p.get("/api/v1/alerts", nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Alerts []activeAlert `json:"alerts"`
	}
	err = json.Unmarshal(data, &res)
	return res.Alerts, err
}

// ruleHealth is a loaded rule's state as Prometheus reports it.
type ruleHealth struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Type      string `json:"type"`
}

func (p *promServer) rules() ([]ruleHealth, error) {
	data, err := p.get("/api/v1/rules", nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Groups []struct {
			Rules []ruleHealth `json:"rules"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	var out []ruleHealth
	for _, g := range res.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// targetsUp reports whether every scrape target is up.
func (p *promServer) targetsUp() (bool, error) {
	data, err := p.get("/api/v1/targets", nil)
	if err != nil {
		return false, err
	}
	var res struct {
		ActiveTargets []struct {
			Health    string `json:"health"`
			LastError string `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return false, err
	}
	if len(res.ActiveTargets) == 0 {
		return false, nil
	}
	for _, tg := range res.ActiveTargets {
		if tg.Health != "up" {
			return false, nil
		}
	}
	return true, nil
}

func (p *promServer) waitTargetsUp(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		up, err := p.targetsUp()
		if err != nil {
			t.Fatal(err)
		}
		if up {
			return
		}
		if time.Now().After(deadline) {
			data, _ := p.get("/api/v1/targets", nil)
			t.Fatalf("scrape targets not up after 30s: %s", data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// exemplar is one exemplar of /api/v1/query_exemplars.
type exemplar struct {
	SeriesLabels map[string]string
	Labels       map[string]string
	Value        float64
}

func (p *promServer) exemplars(expr string, start, end time.Time) ([]exemplar, error) {
	data, err := p.get("/api/v1/query_exemplars", url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix()+1, 10)},
	})
	if err != nil {
		return nil, err
	}
	var res []struct {
		SeriesLabels map[string]string `json:"seriesLabels"`
		Exemplars    []struct {
			Labels map[string]string `json:"labels"`
			Value  string            `json:"value"`
		} `json:"exemplars"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	var out []exemplar
	for _, s := range res {
		for _, e := range s.Exemplars {
			v, _ := strconv.ParseFloat(e.Value, 64)
			out = append(out, exemplar{SeriesLabels: s.SeriesLabels, Labels: e.Labels, Value: v})
		}
	}
	return out, nil
}

// scrapeConfig is a prometheus.yml scraping one target every second and
// evaluating rules every second.
func scrapeConfig(targets []string, ruleFiles ...string) string {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	if len(ruleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range ruleFiles {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	fmt.Fprintf(&b, "scrape_configs:\n  - job_name: otelcol-ragprecision\n    static_configs:\n      - targets: ['%s']\n", strings.Join(targets, "', '"))
	return b.String()
}
