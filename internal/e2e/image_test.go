package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// TestImage builds the container image as `make image` does and runs the
// collector from it, the way a container runtime would: the image's
// ENTRYPOINT and CMD, as the image's user, inside the image's root file
// system (buildah run, chroot isolation, the host's network). Once with the
// default configuration, once with a configuration of the test's own
// mounted into the container and named by --config. It runs wherever
// buildah is installed (.ci/run installs it; Debian: apt-get install
// buildah); in CI it fails without it.

const testImage = "otelcol-ragprecision:e2e"

// imageConfig is the part of the image's OCI configuration the test checks.
type imageConfig struct {
	User         string              `json:"User"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Entrypoint   []string            `json:"Entrypoint"`
	Cmd          []string            `json:"Cmd"`
	Labels       map[string]string   `json:"Labels"`
}

type buildahCLI struct{ argv []string }

func (b buildahCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(b.argv[0], append(b.argv[1:], args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func TestImage(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	path, err := exec.LookPath("buildah")
	if err != nil {
		msg := "no buildah to build and run the image (Debian: apt-get install buildah; .ci/run installs it)"
		if inCI() {
			t.Fatal(msg + " (CI is set, so the image must be built and run)")
		}
		t.Skip(msg)
	}
	b := buildahCLI{argv: []string{path, "--storage-driver", "vfs"}}

	// Build it as a user would.
	start := time.Now()
	mk := exec.Command("make", "-C", repoRoot(t), "image", "IMAGE="+testImage, "CONTAINER_ENGINE=buildah")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	size := b.run(t, "images", "--format", "{{.Size}}", testImage)
	t.Logf("make image built %s in %v: %s", testImage, time.Since(start).Round(time.Second), size)

	var inspect struct {
		OCIv1 struct {
			Config imageConfig `json:"config"`
		} `json:"OCIv1"`
	}
	if err := json.Unmarshal([]byte(b.run(t, "inspect", "--type", "image", testImage)), &inspect); err != nil {
		t.Fatal(err)
	}
	cfg := inspect.OCIv1.Config
	if fmt.Sprint(cfg.Entrypoint) != "[/otelcol-ragprecision]" || fmt.Sprint(cfg.Cmd) != "[--config /etc/otelcol-ragprecision/config.yaml]" {
		t.Errorf("ENTRYPOINT %q CMD %q", cfg.Entrypoint, cfg.Cmd)
	}
	if cfg.User != "10001:10001" {
		t.Errorf("USER %q, want the non-root 10001:10001", cfg.User)
	}
	for _, p := range []string{"4317/tcp", "4318/tcp", "8888/tcp", "13133/tcp"} {
		if _, ok := cfg.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, cfg.ExposedPorts)
		}
	}

	if l := cfg.Labels["org.opencontainers.image.licenses"]; l != "Apache-2.0" {
		t.Errorf("label org.opencontainers.image.licenses %q, want Apache-2.0", l)
	}

	ctr := b.run(t, "from", "--name", fmt.Sprintf("otelcol-e2e-%d", os.Getpid()), testImage)
	t.Cleanup(func() { _ = exec.Command(b.argv[0], append(b.argv[1:], "rm", ctr)...).Run() })
	checkRootFS(t, b, ctr, bin)

	t.Run("default configuration", func(t *testing.T) { runImageDefault(t, b, ctr, cfg) })
	t.Run("own configuration", func(t *testing.T) { runImageOwnConfig(t, b, ctr, cfg) })
}

// checkRootFS looks into the image's files: the very binary `make build`
// made, a CA bundle where Go looks first, the user in /etc/passwd.
func checkRootFS(t *testing.T, b buildahCLI, ctr, bin string) {
	t.Helper()
	root := b.run(t, "mount", ctr)
	defer b.run(t, "umount", ctr)
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "otelcol-ragprecision"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Errorf("the image's binary is not %s", bin)
	}
	bundle, err := os.ReadFile(filepath.Join(root, "etc", "ssl", "certs", "ca-certificates.crt"))
	if err != nil {
		t.Fatalf("no CA bundle: an https judge could not be verified: %v", err)
	}
	inBundle := pemCertificates(bundle)
	certs := len(inBundle)
	if certs < 50 {
		t.Errorf("CA bundle holds %d certificates", certs)
	}
	// Debian's package's CAs, not those this machine added for itself.
	local, _ := filepath.Glob("/usr/local/share/ca-certificates/*.crt")
	for _, f := range local {
		pemBytes, _ := os.ReadFile(f)
		for der := range pemCertificates(pemBytes) {
			if inBundle[der] {
				t.Errorf("the image trusts %s, a CA of the build machine's own", f)
			}
		}
	}
	// The image redistributes the work: its licence and NOTICE go with it.
	for _, f := range []string{"LICENSE", "NOTICE"} {
		want, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "usr", "share", "doc", "otelcol-ragprecision", f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the image's /usr/share/doc/otelcol-ragprecision/%s is not the repository's: %v", f, err)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	if err != nil || !strings.Contains(string(passwd), ":10001:10001:") {
		t.Errorf("no user 10001 in /etc/passwd: %v %q", err, passwd)
	}
	t.Logf("image root: the binary of make build, %d CA certificates, user 10001", certs)
}

// startInImage runs the image's ENTRYPOINT with args inside the container,
// as the image's user, and waits for healthURL.
func startInImage(t *testing.T, b buildahCLI, ctr string, entrypoint, args, runFlags []string, healthURL string) *process {
	t.Helper()
	argv := append(append([]string{}, b.argv...), "run", "--isolation", "chroot", "--network", "host")
	argv = append(argv, runFlags...)
	argv = append(append(append(argv, ctr, "--"), entrypoint...), args...)
	return startProcess(t, "collector in the image", argv, nil, healthURL)
}

// collectorIn finds the collector started by the buildah process p (its
// descendant), for its user and to stop it as a runtime would.
func collectorIn(t *testing.T, p *process, entrypoint string) (pid int, uid string) {
	t.Helper()
	parents := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 {
			parents[n], _ = strconv.Atoi(fields[1])
		}
	}
	for n := range parents {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n))
		if !strings.HasPrefix(string(cmdline), entrypoint+"\x00") {
			continue
		}
		for a := parents[n]; a > 1; a = parents[a] {
			if a == p.cmd.Process.Pid {
				status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", n))
				for _, line := range strings.Split(string(status), "\n") {
					if strings.HasPrefix(line, "Uid:") {
						uid = strings.Fields(line)[1]
					}
				}
				return n, uid
			}
		}
	}
	t.Fatalf("no %s process under buildah (pid %d)", entrypoint, p.cmd.Process.Pid)
	return 0, ""
}

// stopInImage sends SIGTERM to the collector and waits for buildah run to
// end with the collector's exit status.
func stopInImage(t *testing.T, p *process, pid int) {
	t.Helper()
	// Through os, not syscall.Kill: the package must build where syscall
	// has no Kill (Windows), for `go vet ./...` there.
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case p.err = <-p.exited:
		p.done = true
		if p.err != nil {
			t.Fatalf("the collector in the image exited with %v\n%s", p.err, p.log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the collector in the image did not stop within a minute\n%s", p.log.String())
	}
}

// runImageDefault runs ENTRYPOINT + CMD unchanged — the default
// configuration, builtin:lexical — on free ports (its addresses read the
// environment), sends RAG traces and reads the scores off its metrics.
func runImageDefault(t *testing.T, b buildahCLI, ctr string, cfg imageConfig) {
	grpc, health, metrics := freePort(t), freePort(t), freePort(t)
	env := []string{
		"-e", "RAGPRECISION_OTLP_GRPC_ENDPOINT=127.0.0.1:" + grpc,
		"-e", "RAGPRECISION_OTLP_HTTP_ENDPOINT=127.0.0.1:" + freePort(t),
		"-e", "RAGPRECISION_HEALTH_ENDPOINT=127.0.0.1:" + health,
		"-e", "RAGPRECISION_METRICS_HOST=127.0.0.1",
		"-e", "RAGPRECISION_METRICS_PORT=" + metrics,
	}
	p := startInImage(t, b, ctr, cfg.Entrypoint, cfg.Cmd, env, "http://127.0.0.1:"+health+"/")
	pid, uid := collectorIn(t, p, cfg.Entrypoint[0])
	if uid != "10001" {
		t.Errorf("the collector runs as uid %q, want 10001", uid)
	}
	traffic := ragTraffic(20, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sendAll(ctx, t, newOTLPSender(t, "127.0.0.1:"+grpc), traffic, 4)
	url := "http://127.0.0.1:" + metrics + "/metrics"
	deadline := time.Now().Add(30 * time.Second)
	for counterValue(t, url, "otelcol_processor_ragprecision_scored_spans") < float64(len(traffic)) {
		if time.Now().After(deadline) {
			t.Fatalf("scored_spans_total never reached %d\n%s", len(traffic), p.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	var scores uint64
	for _, s := range scrapeHistogram(t, url) {
		scores += s.count
	}
	if scores != uint64(len(traffic)) {
		t.Errorf("rag_contextual_precision counts %d scores, want %d", scores, len(traffic))
	}
	if !strings.Contains(p.log.String(), "Everything is ready") {
		t.Errorf("no start-up log from the container:\n%s", p.log.String())
	}
	stopInImage(t, p, pid)
	t.Logf("image with its default CMD, as uid %s: %d retrievals scored by builtin:lexical", uid, scores)
}

// runImageOwnConfig mounts a configuration into the container and passes
// --config, as `docker run -v … image --config …` does; it is the
// end-to-end test's: an LLM judge over HTTP, both OTLP protocols, spans
// checked attribute by attribute at a sink.
func runImageOwnConfig(t *testing.T, b buildahCLI, ctr string, cfg imageConfig) {
	judge := chattest.NewServer(judgeHandler)
	defer judge.Close()
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	c, conf := endToEndConfig(t, judge.URL, sink.Addr())
	dir := t.TempDir()
	// The container's user must be able to read it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "config.yaml", conf)
	runFlags := []string{"-v", dir + ":/e2e:ro", "-e", "E2E_JUDGE_API_KEY=sk-e2e-secret"}
	p := startInImage(t, b, ctr, cfg.Entrypoint, []string{"--config", "/e2e/config.yaml"}, runFlags, "http://127.0.0.1:"+c.health+"/")
	pid, _ := collectorIn(t, p, cfg.Entrypoint[0])

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nGRPC, wantGRPC := sendGRPC(ctx, t, "127.0.0.1:"+c.grpc)
	nHTTP, wantHTTP := sendHTTP(ctx, t, "127.0.0.1:"+c.http)
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if n, err := sink.WaitForSpans(waitCtx, nGRPC+nHTTP); err != nil {
		t.Fatalf("%d of %d spans arrived: %v\n%s", n, nGRPC+nHTTP, err, p.log.String())
	}
	stopInImage(t, p, pid)
	checkSpans(t, sink.Traces(), append(wantGRPC, wantHTTP...))
	checkJudgeRequests(t, judge)
	t.Logf("image with --config /e2e/config.yaml: %d spans through, %d retrievals scored by the HTTP judge", nGRPC+nHTTP, len(wantGRPC)+len(wantHTTP))
}

// pemCertificates returns the DER of every certificate in a PEM bundle.
func pemCertificates(bundle []byte) map[string]bool {
	out := map[string]bool{}
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if _, err := x509.ParseCertificate(block.Bytes); err == nil {
			out[string(block.Bytes)] = true
		}
	}
}
