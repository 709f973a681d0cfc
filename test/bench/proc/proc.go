// Package proc reads what the benchmarks need of a Linux process and machine from /proc: CPU
// time, resident memory, start time, cores and memory.
package proc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat. It is 100 on every Linux
// architecture Go supports; reading it would need cgo (sysconf).
const clockTicks = 100

// Stat is what the benchmarks read of /proc/<pid>/stat.
type Stat struct {
	// CPU is user plus system time.
	CPU time.Duration
	// StartTicks is when the process started, in clock ticks since boot.
	StartTicks int64
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// parseStat parses a stat line. The command (field 2) is in parentheses and may hold spaces,
// so fields are counted from its closing parenthesis.
func parseStat(line string) (Stat, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("malformed stat line %q", line)
	}
	f := strings.Fields(line[end+1:])
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime 22.
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("stat line has %d fields after the command, want at least 20", len(f))
	}
	var v [3]int64
	for i, field := range []int{14, 15, 22} {
		n, err := strconv.ParseInt(f[field-3], 10, 64)
		if err != nil {
			return Stat{}, fmt.Errorf("stat field %d: %w", field, err)
		}
		v[i] = n
	}
	return Stat{CPU: ticks(v[0] + v[1]), StartTicks: v[2]}, nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// CPU returns the CPU time (user and system) the process has used.
func CPU(pid int) (time.Duration, error) {
	s, err := ReadStat(pid)
	return s.CPU, err
}

// StartedAgo returns how long ago the process started (at a resolution of 10ms).
func StartedAgo(pid int) (time.Duration, error) {
	s, err := ReadStat(pid)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, fmt.Errorf("read uptime: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("malformed /proc/uptime %q", b)
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("parse uptime: %w", err)
	}
	return time.Duration(up*float64(time.Second)) - ticks(s.StartTicks), nil
}

// RSS returns the resident set size of the process (VmRSS).
func RSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	defer f.Close()
	return kibField(f, "VmRSS:")
}

// kibField returns the value of a "Name: <n> kB" line, in bytes.
func kibField(f *os.File, name string) (int64, error) {
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == name {
			n, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %w", name, err)
			}
			return n << 10, nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return 0, fmt.Errorf("no %s line in %s", name, f.Name())
}

// MemTotal returns the machine's memory.
func MemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	return kibField(f, "MemTotal:")
}

// CPUModel returns the model name of the first CPU, or "" when /proc/cpuinfo does not say.
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
