package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (USER_HZ), which
// Linux fixes at 100 on every architecture it exposes to user space.
const clockTicks = 100

// procStat reads a process's CPU time (user plus system, children not included) and
// its parent's pid from /proc/<pid>/stat.
func procStat(pid int) (cpu time.Duration, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces and parentheses: the
	// fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3]: ppid 4, utime 14, stime 15.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / clockTicks, ppid, nil
}

// cpuSample is the CPU time of each process of a set at one moment.
type cpuSample struct {
	at  time.Time
	cpu map[int]time.Duration
}

// sampleTree reads the CPU time of roots and of all their descendants now, so that a
// server that forks a process per connection (PostgreSQL) is counted whole.
func sampleTree(roots []int) cpuSample {
	s := cpuSample{at: time.Now(), cpu: map[int]time.Duration{}}
	if len(roots) == 0 {
		return s
	}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, err := procStat(pid); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := s.cpu[pid]; seen {
			continue
		}
		if cpu, _, err := procStat(pid); err == nil {
			s.cpu[pid] = cpu
		}
		queue = append(queue, children[pid]...)
	}
	return s
}

// samplePIDs reads the CPU time of exactly pids now.
func samplePIDs(pids []int) cpuSample {
	s := cpuSample{at: time.Now(), cpu: map[int]time.Duration{}}
	for _, pid := range pids {
		if cpu, _, err := procStat(pid); err == nil {
			s.cpu[pid] = cpu
		}
	}
	return s
}

// busy returns the CPU the processes of b used since a, as a fraction of one core:
// a process in both counts its difference, one that started since a counts whole
// (it did all its work in between), and one that ended since a is lost.
func busy(a, b cpuSample) float64 {
	var d time.Duration
	for pid, cpu := range b.cpu {
		d += cpu - a.cpu[pid]
	}
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return 0
	}
	return d.Seconds() / wall.Seconds()
}

// loadAvg returns the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// rssMB returns this process's resident set size in MiB, from /proc/self/status.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
