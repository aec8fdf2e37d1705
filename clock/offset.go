package clock

import (
	"context"
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
