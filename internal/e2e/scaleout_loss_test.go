package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestScaleOutReplicaLoss kills one of two scoring replicas in the middle of
// a run and counts what the router does with its share: spans sent against
// spans received (once, or more than once), for the loadbalancing
// exporter's defaults and for the two configurations deploy/router ships.
// The replicas listen on 127.0.0.2 and 127.0.0.3 at the same port, so that
// one DNS name can resolve to both.

// routerDefaultsConfig is the loadbalancing exporter with nothing set but
// what it needs: its defaults are a per-replica OTLP exporter with a queue
// and retries for up to 5 minutes, and no queue or retry of its own.
const routerDefaultsConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ${env:ROUTER_OTLP_GRPC_ENDPOINT}
exporters:
  load_balancing:
    routing_key: traceID
    protocol:
      otlp:
        tls:
          insecure: true
    resolver:
      static:
        hostnames: ${env:SCORING_REPLICAS}
extensions:
  health_check:
    endpoint: ${env:ROUTER_HEALTH_ENDPOINT}
service:
  extensions: [health_check]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: ${env:ROUTER_METRICS_HOST}
                port: ${env:ROUTER_METRICS_PORT}
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [load_balancing]
`

const scoringDNSName = "scoring.ragprecision.test"

// lossScenario is one way of losing a replica.
type lossScenario struct {
	name string
	// router configures the router for replicas a and b; gone, if not
	// nil, is called once b is down (what Kubernetes does when a pod ends:
	// its address leaves the headless Service).
	router func(t *testing.T, a, b *replica) (run routerRun, gone func())
	signal syscall.Signal
	// restart starts b again, at the same address, a third of the run
	// after it was stopped (a StatefulSet's pod coming back).
	restart bool
	// lossFree: every span sent must arrive.
	lossFree bool
}

// lossResult is what a scenario cost.
type lossResult struct {
	sent, received, duplicates  int
	lostBefore, lostAfter       int // lost spans sent before / after b stopped
	scoredTwice                 int // retrieval spans that arrived scored more than once
	unscored                    map[string]int
	senderRetries, senderFailed int
}

func (r lossResult) String() string {
	var st []string
	for k, v := range r.unscored {
		st = append(st, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(st)
	return fmt.Sprintf("sent %d spans, received %d (lost %d: %d sent before the replica stopped, %d after), %d duplicates (%d retrievals scored twice); retrievals not scored: [%s]; sender retries %d, requests refused %d",
		r.sent, r.received, r.sent-r.received, r.lostBefore, r.lostAfter, r.duplicates, r.scoredTwice, strings.Join(st, " "), r.senderRetries, r.senderFailed)
}

func TestScaleOutReplicaLoss(t *testing.T) {
	t.Parallel()
	collectorBinary(t)
	routerBinary(t)
	scenarios := []lossScenario{
		{
			name: "defaults, static, SIGKILL, not back",
			router: func(t *testing.T, a, b *replica) (routerRun, func()) {
				run := staticRouter(t, []*replica{a, b})
				run.configs = []string{writeFile(t, t.TempDir(), "router-defaults.yaml", routerDefaultsConfig)}
				return run, nil
			},
			signal: syscall.SIGKILL,
		},
		{
			name: "defaults, static, SIGKILL, back after a while",
			router: func(t *testing.T, a, b *replica) (routerRun, func()) {
				run := staticRouter(t, []*replica{a, b})
				run.configs = []string{writeFile(t, t.TempDir(), "router-defaults.yaml", routerDefaultsConfig)}
				return run, nil
			},
			signal:  syscall.SIGKILL,
			restart: true,
		},
		{
			name: "static.yaml, SIGTERM, back after a while",
			router: func(t *testing.T, a, b *replica) (routerRun, func()) {
				return staticRouter(t, []*replica{a, b}), nil
			},
			signal:   syscall.SIGTERM,
			restart:  true,
			lossFree: true,
		},
		{
			name:     "dns.yaml, SIGTERM, address leaves DNS",
			router:   dnsRouter,
			signal:   syscall.SIGTERM,
			lossFree: true,
		},
		{
			name:   "dns.yaml, SIGKILL, address leaves DNS",
			router: dnsRouter,
			signal: syscall.SIGKILL,
		},
	}
	for _, sc := range scenarios {
		t.Run(strings.NewReplacer(" ", "_", ",", "").Replace(sc.name), func(t *testing.T) {
			t.Parallel() // each scenario has a port of its own on 127.0.0.2 and 127.0.0.3
			res := runLossScenario(t, sc)
			t.Logf("%s: %v", sc.name, res)
			if sc.lossFree && res.received != res.sent {
				t.Errorf("%s lost %d of %d spans", sc.name, res.sent-res.received, res.sent)
			}
		})
	}
}

// dnsRouter is deploy/router/dns.yaml resolving scoringDNSName through a
// hosts file of the test's, which loses b's address once b is gone.
func dnsRouter(t *testing.T, a, b *replica) (routerRun, func()) {
	t.Helper()
	if err := exec.Command("unshare", "--mount", "--propagation", "private", "true").Run(); err != nil {
		msg := fmt.Sprintf("the DNS scenario replaces /etc/hosts in a mount namespace of the router's own, and unshare --mount fails here: %v", err)
		if inCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	write := func(addrs ...string) {
		var b strings.Builder
		b.WriteString("127.0.0.1 localhost\n")
		for _, a := range addrs {
			b.WriteString(a + " " + scoringDNSName + "\n")
		}
		// In place: the bind mount follows the file, not its name.
		if err := os.WriteFile(hosts, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	write(a.host, b.host)
	return routerRun{
		configs: []string{filepath.Join(repoRoot(t), "deploy", "router", "dns.yaml")},
		env:     []string{"SCORING_DNS_NAME=" + scoringDNSName, "SCORING_PORT=" + a.grpc, "SCORING_DNS_INTERVAL=1s"},
		hosts:   hosts,
	}, func() { write(a.host) }
}

func runLossScenario(t *testing.T, sc lossScenario) lossResult {
	port := freePortOn(t, "127.0.0.2", "127.0.0.3")
	a := newReplica(t, "scoring-a", "127.0.0.2", port, "2s")
	b := newReplica(t, "scoring-b", "127.0.0.3", port, "2s")
	run, gone := sc.router(t, a, b)
	router, addr, _ := startRouter(t, run)
	defer router.stop(t)

	traffic := ragTraffic(300, 7)
	requests := ragRequests(traffic, 4)
	killAt, restartAt := len(requests)/3, 2*len(requests)/3
	sender := newOTLPSender(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sentBefore := map[pcommon.SpanID]bool{} // spans sent before b stopped
	for i, td := range requests {
		switch {
		case i == killAt:
			_ = b.proc.signal(t, sc.signal)
			if gone != nil {
				gone()
			}
		case i == restartAt && sc.restart:
			b.start(t, "scoring-b (again)", b.healthURL)
		}
		if i < killAt {
			for _, rs := range td.ResourceSpans().All() {
				for _, s := range rs.ScopeSpans().At(0).Spans().All() {
					sentBefore[s.SpanID()] = true
				}
			}
		}
		_ = sender.send(ctx, td) // a refusal is counted by the sender
		time.Sleep(20 * time.Millisecond)
	}
	want := spanCount(traffic)
	// Quiet for longer than the routers' longest retry interval (10s, with
	// up to 50% jitter) where nothing may be lost: a late retry is not a loss.
	quiet := 12 * time.Second
	if sc.lossFree {
		quiet = 20 * time.Second
	}
	waitSettled(traffic, quiet, 90*time.Second, a.sink, b.sink)

	res := lossResult{sent: want, unscored: map[string]int{}, senderRetries: sender.retries, senderFailed: sender.failed}
	got := arrivals(a.sink, b.sink)
	for _, tr := range traffic {
		for _, id := range []pcommon.SpanID{tr.root, tr.retrieval, tr.plain} {
			ar := got[id]
			switch {
			case ar == nil && sentBefore[id]:
				res.lostBefore++
			case ar == nil:
				res.lostAfter++
			default:
				res.received++
				res.duplicates += ar.count - 1
			}
		}
		if ar := got[tr.retrieval]; ar != nil && ar.status != "scored" {
			res.unscored[ar.status]++
		} else if ar != nil && ar.count > 1 {
			res.scoredTwice++
		}
	}
	return res
}
