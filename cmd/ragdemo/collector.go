package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// collector is a collector child process started by the demo.
type collector struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
}

// startCollector starts binary with config, its stdout and stderr going to a
// new temporary log file, and env added to the demo's own environment (the
// config reads its addresses from RAGDEMO_* variables).
func startCollector(binary, config string, env []string) (*collector, error) {
	if err := checkCollector(binary, config); err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "ragdemo-collector-*.log")
	if err != nil {
		return nil, fmt.Errorf("collector log: %w", err)
	}
	cmd := exec.Command(binary, "--config", config)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(append(os.Environ(), env...), canaryEnv(config)...)
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	c := &collector{cmd: cmd, logPath: logFile.Name(), exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		logFile.Close()
		close(c.exited)
	}()
	return c, nil
}

// canaryEnv points examples/demo.yaml's drift canary at the canary file
// beside it (examples/canary/demo.jsonl), wherever the demo is run from:
// the config's default path is from the repository's root.
func canaryEnv(config string) []string {
	path, err := filepath.Abs(filepath.Join(filepath.Dir(config), "canary", "demo.jsonl"))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return []string{"RAGDEMO_CANARY=" + path}
}

// checkCollector fails when the binary or the config is missing.
func checkCollector(binary, config string) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("collector binary: %w (build it with `make build`)", err)
	}
	if _, err := os.Stat(config); err != nil {
		return fmt.Errorf("collector config: %w", err)
	}
	return nil
}

// pid is the child's process ID.
func (c *collector) pid() int { return c.cmd.Process.Pid }

// waitHealthy polls the health_check endpoint until it answers 200, the
// collector exits, or timeout passes. A collector that fails to start (bad
// config, port in use) exits within a second, so watching for the exit turns
// a long timeout into a quick, precise error.
func (c *collector) waitHealthy(ctx context.Context, healthAddr string, timeout time.Duration) error {
	err := waitHealthy(ctx, healthAddr, timeout, c.exited)
	if errors.Is(err, errExited) {
		return fmt.Errorf("the collector exited during start-up (%v); see its log: %s", c.waitErr, c.logPath)
	}
	if err != nil {
		return fmt.Errorf("%w; see the collector's log: %s", err, c.logPath)
	}
	// The health port was free when the child started (checkFree), so the
	// answer came from the child, unless it has exited since: then it was
	// from a process that took the port in between.
	select {
	case <-c.exited:
		return fmt.Errorf("the collector exited during start-up (%v), and another process answered on %s; see its log: %s", c.waitErr, healthAddr, c.logPath)
	default:
	}
	return nil
}

// stop sends SIGTERM, which makes the collector drain its pipelines and shut
// down cleanly, and waits for it to exit; after grace it is killed.
func (c *collector) stop(grace time.Duration) error {
	select {
	case <-c.exited:
		return nil // already gone, e.g. after Ctrl-C reached the whole process group
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping the collector: %w", err)
	}
	select {
	case <-c.exited:
		return nil
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("the collector did not stop within %s of SIGTERM and was killed; see its log: %s", grace, c.logPath)
	}
}

var errExited = errors.New("process exited")

// waitHealthy polls http://addr/ until it answers 200. exited, if not nil,
// aborts the wait with errExited when it is closed.
func waitHealthy(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "http://" + addr + "/"
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			if parent := context.Cause(ctx); errors.Is(parent, context.Canceled) {
				return parent
			}
			return fmt.Errorf("the collector was not healthy at %s within %s (last: %v)", url, timeout, last)
		case <-tick.C:
		}
	}
}
