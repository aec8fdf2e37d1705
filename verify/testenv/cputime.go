package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// Linux.
const clockTicks = 100

// ProcessCPU returns the CPU time (user and system) the process pid has spent so
// far, or false where /proc does not say (not Linux, or the process is gone).
func ProcessCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses; the fields after
	// its last ")" start with the state (field 3), so utime and stime (fields 14
	// and 15) are the 12th and 13th of them.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// A StartBound bounds the start of a process a test runs (a server it waits to
// answer) in the CPU time the process spends, not in wall time. On a loaded machine
// the wall time a start takes grows with the load (the process waits for a core), so
// a wall deadline that an idle machine meets by far fails there; the CPU time a
// start needs stays put, and a process that spends many times that without
// starting is stuck, not slow. Wall bounds only a process that spends no CPU time
// (one that waits for something that never comes), and should lie far past any
// wait of the process's own.
type StartBound struct {
	CPU  time.Duration // the most CPU time the start may take
	Wall time.Duration // the most wall time the start may take
	pid  int
	from time.Time
}

// NewStartBound starts bounding the start of the process pid, from now.
func NewStartBound(pid int, cpu, wall time.Duration) *StartBound {
	return &StartBound{CPU: cpu, Wall: wall, pid: pid, from: time.Now()}
}

// Passed returns what the start passed, for a test's failure message ("120 s of
// CPU time, the bound 60 s, in 3m0s"), or "" while it is within both bounds.
// Where /proc does not say, only Wall bounds it.
func (b *StartBound) Passed() string {
	wall := time.Since(b.from).Round(time.Second)
	cpu, ok := ProcessCPU(b.pid)
	switch {
	case ok && cpu > b.CPU:
		return fmt.Sprintf("%v of CPU time, the bound %v, in %v", cpu, b.CPU, wall)
	case wall > b.Wall:
		return fmt.Sprintf("%v, the bound, with %v of CPU time", wall, cpu)
	}
	return ""
}
