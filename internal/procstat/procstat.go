// Package procstat reads what a process has used so far from Linux's /proc:
// CPU time (user + system) and resident memory. The load generator and the
// distribution benchmark read them for the collector's process before and
// after a measured window, so that CPU per span counts the collector's own
// work only, not the load generator's or the sink's that share the machine.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// The kernel exposes 100 on every architecture Go supports (the value is
// fixed in its ABI, whatever CONFIG_HZ), which is why Go's own runtime and
// procps assume it too.
const clockTicks = 100

// Sample is a process's resource use at one moment.
type Sample struct {
	// CPU is user plus system time since the process started, at a
	// resolution of 10 ms.
	CPU time.Duration
	// RSS is the resident set size now, in bytes.
	RSS int64
	// PeakRSS is the highest resident set size so far (VmHWM), in bytes.
	PeakRSS int64
}

// Read samples process pid.
func Read(pid int) (Sample, error) {
	cpu, err := CPU(pid)
	if err != nil {
		return Sample{}, err
	}
	rss, peak, err := memory(pid)
	if err != nil {
		return Sample{}, err
	}
	return Sample{CPU: cpu, RSS: rss, PeakRSS: peak}, nil
}

// Self samples the calling process.
func Self() (Sample, error) { return Read(os.Getpid()) }

// CPU is the user plus system time process pid has used.
func CPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(raw)
}

// parseStat reads utime and stime (fields 14 and 15) from the text of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// contain spaces and parentheses itself, so fields are counted from the
// last ')'.
func parseStat(raw []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, errors.New("procstat: malformed stat: no command name")
	}
	// After ") " come field 3 (state) onwards.
	fields := strings.Fields(string(raw[end+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("procstat: malformed stat: %d fields after the command name", len(fields))
	}
	u, err := strconv.ParseUint(fields[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("procstat: utime: %w", err)
	}
	s, err := strconv.ParseUint(fields[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("procstat: stime: %w", err)
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// memory returns VmRSS and VmHWM of process pid in bytes.
func memory(pid int) (rss, peak int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStatus(raw)
}

// parseStatus reads VmRSS and VmHWM (in kB) from /proc/<pid>/status.
func parseStatus(raw []byte) (rss, peak int64, err error) {
	found := 0
	for line := range strings.SplitSeq(string(raw), "\n") {
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &peak
		default:
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			return 0, 0, fmt.Errorf("procstat: malformed status line %q", line)
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("procstat: %q: %w", line, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("procstat: status has no VmRSS or VmHWM (a kernel thread, or not Linux)")
	}
	return rss, peak, nil
}

// FindByName returns the ID of the one running process whose command name
// (/proc/<pid>/comm, the executable's name cut to 15 bytes) is name, cut
// likewise. It fails when there is none, or more than one.
func FindByName(name string) (int, error) {
	want := name
	if len(want) > 15 {
		want = want[:15]
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	var found []int
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil {
			continue // exited meanwhile
		}
		if strings.TrimSuffix(string(comm), "\n") != want {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(d))
		if err == nil && pid != os.Getpid() {
			found = append(found, pid)
		}
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("no running process is called %q", name)
	case 1:
		return found[0], nil
	default:
		return 0, fmt.Errorf("%d processes are called %q (%v): give the one to measure with -pid", len(found), name, found)
	}
}

// Machine is the CPU time all processes have used, summed over every core,
// and the number of cores, from the first lines of /proc/stat.
type Machine struct {
	// Busy is user, nice, system, irq, softirq and steal time: everything
	// but idle and iowait.
	Busy time.Duration
	// Nice is the part of Busy spent in processes of lowered priority
	// (nice > 0), which the scheduler runs mostly when others wait.
	Nice  time.Duration
	Cores int
}

// ReadMachine samples the machine's CPU time.
func ReadMachine() (Machine, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Machine{}, err
	}
	return parseMachine(raw)
}

func parseMachine(raw []byte) (Machine, error) {
	var m Machine
	found := false
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			m.Cores++
			continue
		}
		// cpu user nice system idle iowait irq softirq steal [guest guest_nice]
		if len(f) < 9 {
			return m, fmt.Errorf("procstat: malformed /proc/stat line %q", line)
		}
		var busy uint64
		for i, v := range f[1:9] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return m, fmt.Errorf("procstat: /proc/stat: %w", err)
			}
			if i != 3 && i != 4 { // idle, iowait
				busy += n
			}
		}
		m.Busy = time.Duration(busy) * time.Second / clockTicks
		nice, _ := strconv.ParseUint(f[2], 10, 64)
		m.Nice = time.Duration(nice) * time.Second / clockTicks
		found = true
	}
	if !found {
		return m, errors.New("procstat: /proc/stat has no cpu line")
	}
	return m, nil
}
