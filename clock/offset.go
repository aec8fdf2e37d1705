package clock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Offset is a Clock that reads its parent plus a fixed offset: a machine whose clock
// is that far ahead (positive) or behind (negative). It exists for tests of several
// processes with different clocks, since libfaketime does not reach Go programs
// (they read the clock through the vDSO).
type Offset struct {
	Parent Clock
	By     time.Duration
}

// Now returns the parent's time plus the offset.
func (o Offset) Now() int64 { return o.Parent.Now() + int64(o.By) }

// SleepUntil sleeps on the parent until Now() >= t.
func (o Offset) SleepUntil(ctx context.Context, t int64) error {
	return o.Parent.SleepUntil(ctx, t-int64(o.By))
}

// SkewEnv is the environment variable that sets a testing-only clock offset for the
// flurry CLI and server, e.g. FLURRY_CLOCK_SKEW=-10s.
const SkewEnv = "FLURRY_CLOCK_SKEW"

// FromEnv returns clock.NewSystem(), shifted by FLURRY_CLOCK_SKEW when it is set, and
// the offset. Programs must announce a non-zero offset loudly: it exists only to test
// clock steps across processes.
func FromEnv() (Clock, time.Duration, error) {
	sys := NewSystem()
	v := os.Getenv(SkewEnv)
	if v == "" {
		return sys, 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, 0, fmt.Errorf("clock: %s=%q is not a duration such as -10s: %v", SkewEnv, v, err)
	}
	if d == 0 {
		return sys, 0, nil
	}
	return Offset{Parent: sys, By: d}, d, nil
}
