package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCollectorDiesWithDemo starts a stand-in collector from a helper
// process that then exits without stopping it, as a demo killed or cut off
// by `| head` does: the collector must not outlive it.
func TestCollectorDiesWithDemo(t *testing.T) {
	if dir := os.Getenv("RAGDEMO_TEST_HELPER_DIR"); dir != "" {
		helperStartAndAbandon(dir)
		return
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "collector")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho $$ > \"$RAGDEMO_TEST_HELPER_DIR/pid.tmp\"\nmv \"$RAGDEMO_TEST_HELPER_DIR/pid.tmp\" \"$RAGDEMO_TEST_HELPER_DIR/pid\"\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestCollectorDiesWithDemo$")
	helper.Env = append(os.Environ(), "RAGDEMO_TEST_HELPER_DIR="+dir)
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	// The guard only keeps a failure from hanging the test.
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the collector (pid %d) outlived the demo that started it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// helperStartAndAbandon runs in the helper process: it starts the stand-in
// collector, waits until it runs, and exits without stopping it.
func helperStartAndAbandon(dir string) {
	c, err := startCollector(filepath.Join(dir, "collector"), filepath.Join(dir, "collector"), nil)
	if err != nil {
		os.Exit(2)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
			os.Exit(0)
		}
		select {
		case <-c.exited:
			os.Exit(3)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// alive reports whether pid runs (a zombie awaiting its reaper does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
