package procstat

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseStatCountsFromTheLastParenthesis(t *testing.T) {
	// A command name with a space and a parenthesis of its own; utime 250
	// and stime 75 ticks are fields 14 and 15.
	raw := []byte("4242 (otel (col) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 100 1000000 2000 18446744073709551615\n")
	got, err := parseStat(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Fatalf("CPU %v, want %v", got, want)
	}
}

func TestParseStatRefusesTruncatedInput(t *testing.T) {
	for _, raw := range []string{"", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 u s"} {
		if _, err := parseStat([]byte(raw)); err == nil {
			t.Errorf("%q: no error", raw)
		}
	}
}

func TestParseStatus(t *testing.T) {
	raw := []byte("Name:\totelcol\nVmPeak:\t 9000 kB\nVmHWM:\t    6000 kB\nVmRSS:\t    5000 kB\nThreads:\t12\n")
	rss, peak, err := parseStatus(raw)
	if err != nil {
		t.Fatal(err)
	}
	if rss != 5000<<10 || peak != 6000<<10 {
		t.Fatalf("rss %d peak %d", rss, peak)
	}
	if _, _, err := parseStatus([]byte("Name:\tkthreadd\n")); err == nil {
		t.Fatal("a status without VmRSS read as a sample")
	}
}

// The CPU this process burns shows up in its own sample.
func TestSelfSeesItsOwnWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if before.RSS <= 0 || before.PeakRSS < before.RSS {
		t.Fatalf("memory: %+v", before)
	}
	// Spin until the clock (10 ms ticks) has moved by at least two ticks.
	x := 0
	for {
		for i := range 1_000_000 {
			x += i
		}
		now, err := Self()
		if err != nil {
			t.Fatal(err)
		}
		if now.CPU-before.CPU >= 20*time.Millisecond {
			break
		}
	}
	_ = x
}

func TestFindByName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := FindByName("no-such-process-name"); err == nil || !strings.Contains(err.Error(), "no running process") {
		t.Fatalf("absent: %v", err)
	}
	// This test's own process is left out: a load generator must not
	// measure itself when it shares the collector's name.
	self, _ := os.ReadFile("/proc/self/comm")
	if pid, err := FindByName(strings.TrimSpace(string(self))); err == nil && pid == os.Getpid() {
		t.Fatal("found itself")
	}
}

func TestParseMachine(t *testing.T) {
	raw := []byte("cpu  100 5 50 1000 7 3 2 40 0 0\ncpu0 50 2 25 500 3 1 1 20 0 0\ncpu1 50 3 25 500 4 2 1 20 0 0\nintr 12345\n")
	m, err := parseMachine(raw)
	if err != nil {
		t.Fatal(err)
	}
	// 100+5+50+3+2+40 ticks busy; idle and iowait left out.
	if m.Busy != 2*time.Second || m.Nice != 50*time.Millisecond || m.Cores != 2 {
		t.Fatalf("%+v", m)
	}
	if _, err := parseMachine([]byte("intr 1\n")); err == nil {
		t.Fatal("no cpu line accepted")
	}
}
