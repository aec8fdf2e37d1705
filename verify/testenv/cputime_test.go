package testenv

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// ProcessCPU counts the CPU time this process spends: reading it in a loop spends
// CPU time, and the count grows by 300 ms, however long the loaded machine takes
// to give it that. StartBound says when either bound is passed.
func TestProcessCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat: Linux only")
	}
	before, ok := ProcessCPU(os.Getpid())
	if !ok {
		t.Fatal("ProcessCPU of this process: /proc did not say")
	}
	spins := 0
	for end := time.Now().Add(time.Minute); ; spins++ {
		now, _ := ProcessCPU(os.Getpid())
		if now-before >= 300*time.Millisecond {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("a minute of spinning and %v of CPU time counted", now-before)
		}
	}
	t.Logf("%d reads of /proc for 300 ms of CPU time", spins)
	if _, ok := ProcessCPU(-1); ok {
		t.Error("ProcessCPU of no process said a time")
	}
	b := NewStartBound(os.Getpid(), time.Hour, time.Hour)
	if p := b.Passed(); p != "" {
		t.Errorf("within both bounds: Passed = %q", p)
	}
	b.CPU = 100 * time.Millisecond
	if p := b.Passed(); p == "" {
		t.Error("this process spent more than 100 ms of CPU time, and Passed says nothing")
	}
	b.CPU, b.Wall = time.Hour, -time.Second
	if p := b.Passed(); p == "" {
		t.Error("past its wall bound, and Passed says nothing")
	}
}
