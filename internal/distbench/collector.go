package distbench

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// collector is the distribution running as a child process.
type collector struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// startCollector runs binary with the config at path, its output going to
// logPath.
func startCollector(binary, path, logPath string) (*collector, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "--config", path)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	c := &collector{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		logFile.Close()
		close(c.exited)
	}()
	return c, nil
}

func (c *collector) pid() int { return c.cmd.Process.Pid }

// waitHealthy polls the health_check endpoint until it answers 200.
func (c *collector) waitHealthy(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.exited:
			return fmt.Errorf("the collector exited during start-up (%v); its log: %s", c.waitErr, c.logPath)
		case <-ctx.Done():
			return fmt.Errorf("the collector was not healthy within %s; its log: %s", timeout, c.logPath)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, which drains the pipeline (held spans are released,
// the batch processor and the exporter's queue flush), and waits for the
// exit; after grace it kills the process and says so.
func (c *collector) stop(grace time.Duration) error {
	select {
	case <-c.exited:
		return fmt.Errorf("the collector had exited (%v); its log: %s", c.waitErr, c.logPath)
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if c.waitErr != nil {
			return fmt.Errorf("the collector exited with %v; its log: %s", c.waitErr, c.logPath)
		}
		return nil
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("the collector did not stop within %s of SIGTERM and was killed; its log: %s", grace, c.logPath)
	}
}

// freePorts returns n distinct free loopback ports. Each is free when
// returned; another process could take it before the collector binds it,
// which the health check then reports.
func freePorts(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

// processorCounts are ragprecision's span counters, summed over labels.
type processorCounts struct {
	Candidates, Selected, Scored float64
	// Unscored is by status.
	Unscored map[string]float64
	// Held is the spans held for judging at the time.
	Held float64
}

// Counter names as the collector's Prometheus endpoint serves them.
const (
	metricCandidates = "otelcol_processor_ragprecision_candidate_spans_total"
	metricSelected   = "otelcol_processor_ragprecision_selected_spans_total"
	metricScored     = "otelcol_processor_ragprecision_scored_spans_total"
	metricUnscored   = "otelcol_processor_ragprecision_unscored_spans_total"
	metricHeld       = "otelcol_processor_ragprecision_held_spans"
)

// scrapeCounts reads ragprecision's counters from the metrics endpoint.
func scrapeCounts(addr string) (processorCounts, error) {
	counts := processorCounts{Unscored: map[string]float64{}}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return counts, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return counts, fmt.Errorf("metrics endpoint: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return counts, err
	}
	sum := func(name string) float64 {
		total := 0.0
		if f, ok := families[name]; ok {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		return total
	}
	counts.Candidates, counts.Selected, counts.Scored = sum(metricCandidates), sum(metricSelected), sum(metricScored)
	counts.Held = sum(metricHeld)
	if f, ok := families[metricUnscored]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" && m.GetCounter().GetValue() > 0 {
					counts.Unscored[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return counts, nil
}

// String is "scored 1234 of 1300 selected (held 40, overflow 26)".
func (p processorCounts) String() string {
	s := fmt.Sprintf("scored %.0f of %.0f selected", p.Scored, p.Selected)
	var parts []string
	if p.Held > 0 {
		parts = append(parts, fmt.Sprintf("held %.0f", p.Held))
	}
	for _, status := range slices.Sorted(maps.Keys(p.Unscored)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", status, p.Unscored[status]))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}
