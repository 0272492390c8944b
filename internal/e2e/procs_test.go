package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/testports"
)

// This file runs any collector build — the distribution, the router, the
// distribution inside its image — as a child process configured by a
// template, for the tests of the deployment around the processor.
//
// The tests run in parallel: most of their time is spent waiting (rule
// windows, retries, shutdowns). A new test calls t.Parallel() first and
// shares nothing: ports from freePort/freePortOn, files under t.TempDir(),
// its own judge, sink and Prometheus, environment for children through
// startProcess (t.Setenv forbids Parallel), the router from routerBinary
// (`make e2e` builds it while the other tests run). One that needs a fixed
// address stays serial and says why; one that measures CPU belongs with
// bench-short, which runs alone.

// routerEnv names the router distribution (bin/otelcol-router) `make e2e`
// builds from deploy/router/builder-config.yaml.
const routerEnv = "RAGPRECISION_ROUTER"

// routerBuildEnv, when set, names a file that does not exist yet: `make
// e2e` builds the router while the tests that need no router run, and
// writes the build's exit status there when it is done.
const routerBuildEnv = "RAGPRECISION_ROUTER_BUILD_STATUS"

// routerBinary returns the router, once it is built.
func routerBinary(t *testing.T) string {
	t.Helper()
	if status := os.Getenv(routerBuildEnv); status != "" {
		waitForBuild(t, status)
	}
	return requiredBinary(t, routerEnv, "the router (make router)")
}

// waitForBuild waits for the exit status a build writes to path, and fails
// the test unless it is 0.
func waitForBuild(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Minute)
	for {
		raw, err := os.ReadFile(path)
		if status := strings.TrimSpace(string(raw)); err == nil && status != "" {
			if status != "0" {
				t.Fatalf("the router's build failed (exit status %s); make prints its output after the tests", status)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the router's build wrote no exit status to %s within 15 minutes", path)
		}
		time.Sleep(time.Second)
	}
}

// requiredBinary returns the file the environment variable names. Without
// it the test is skipped, except in CI (CI set, as CI services and .ci/run
// set it), where it fails: a skipped end-to-end test would pass a build
// whose binaries were never run.
func requiredBinary(t *testing.T, env, what string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		msg := env + " is not set; `make e2e` builds " + what + " and sets it"
		if inCI() {
			t.Fatal(msg + " (CI is set, so the end-to-end tests must run)")
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v", env, bin, err)
	}
	return bin
}

func inCI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}

// repoRoot is the checkout the tests run in (they run in internal/e2e).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// freePortOn returns a port free on every one of hosts, so that replicas on
// different loopback addresses can share it (the DNS resolver of the
// loadbalancing exporter has one port for every address it resolves), and
// given to no other test (internal/testports).
func freePortOn(t *testing.T, hosts ...string) string {
	t.Helper()
	port, err := testports.Pick(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}

// render replaces each {{KEY}} of tmpl and fails on one left over.
func render(t *testing.T, tmpl string, vars map[string]string) string {
	t.Helper()
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	out := strings.NewReplacer(pairs...).Replace(tmpl)
	if i := strings.Index(out, "{{"); i >= 0 {
		t.Fatalf("template variable left: %.40s", out[i:])
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// process is a collector running as a child process.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan error
	err    error // the exit, once exited is drained
	done   bool
}

// startProcess runs argv and waits until healthURL answers 200.
func startProcess(t *testing.T, name string, argv, env []string, healthURL string) *process {
	t.Helper()
	p := &process{name: name, log: &syncBuffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.done {
			_ = p.cmd.Process.Kill()
			p.wait()
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.log.String())
		}
	})
	if err := waitHealthy(healthURL, p.exited, 60*time.Second); err != nil {
		p.done = true
		t.Fatalf("%s: %v\n%s", name, err, p.log.String())
	}
	return p
}

// waitHealthy polls url until it answers 200, the process exits or the
// timeout passes.
func waitHealthy(url string, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before becoming healthy: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not healthy after %v", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *process) wait() error {
	if !p.done {
		p.err = <-p.exited
		p.done = true
	}
	return p.err
}

// signal sends sig and waits up to a minute for the exit.
func (p *process) signal(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case p.err = <-p.exited:
		p.done = true
		return p.err
	case <-ctx.Done():
		t.Fatalf("%s did not exit within a minute of %v\n%s", p.name, sig, p.log.String())
		return nil
	}
}

// stop ends the process with SIGTERM and expects a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.signal(t, syscall.SIGTERM); err != nil {
		t.Fatalf("%s exited with %v\n%s", p.name, err, p.log.String())
	}
}
