package clock

import (
	"context"
	"sync/atomic"
	"time"
)

// Fake is a clock for tests. It stands still until Set or Add moves it, by any amount
// in either direction. SleepUntil does not wait: it moves the clock forward to the
// instant asked for (never back), as if the sleeper had waited that long, and counts
// the simulated sleep. The zero Fake stands at the Unix epoch.
type Fake struct {
	now    atomic.Int64
	slept  atomic.Int64
	sleeps atomic.Int64
}

// NewFake returns a Fake clock standing at t.
func NewFake(t time.Time) *Fake {
	f := &Fake{}
	f.now.Store(t.UnixNano())
	return f
}

// Now returns the fake time in nanoseconds since the Unix epoch.
func (f *Fake) Now() int64 { return f.now.Load() }

// Time returns the fake time as a time.Time in UTC.
func (f *Fake) Time() time.Time { return time.Unix(0, f.now.Load()).UTC() }

// Set moves the clock to t, backwards or forwards.
func (f *Fake) Set(t time.Time) { f.now.Store(t.UnixNano()) }

// Add moves the clock by d; a negative d is a step backwards.
func (f *Fake) Add(d time.Duration) { f.now.Add(int64(d)) }

// SleepUntil moves the clock forward to t if it stands before t, then returns. It
// returns ctx.Err() without moving the clock when ctx is done.
func (f *Fake) SleepUntil(ctx context.Context, t int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		now := f.now.Load()
		if now >= t {
			return nil
		}
		if f.now.CompareAndSwap(now, t) {
			f.slept.Add(t - now)
			f.sleeps.Add(1)
			return nil
		}
	}
}

// Slept returns the total simulated sleep and the number of sleeps that moved the clock.
func (f *Fake) Slept() (time.Duration, int64) {
	return time.Duration(f.slept.Load()), f.sleeps.Load()
}
