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
	limit  atomic.Int64
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

// LimitSleep makes each later SleepUntil move the clock forward by at most d and
// then return, even if the clock has not reached the instant asked for: an early
// wake-up, as a sleeper sees when the clock steps back while it sleeps. Callers of a
// Clock must check the time after sleeping; this tests that they do. Zero or less
// removes the limit.
func (f *Fake) LimitSleep(d time.Duration) { f.limit.Store(int64(d)) }

// SleepUntil moves the clock forward to t if it stands before t (or by the limit set
// with LimitSleep), then returns. It returns ctx.Err() without moving the clock when
// ctx is done.
func (f *Fake) SleepUntil(ctx context.Context, t int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		now := f.now.Load()
		if now >= t {
			return nil
		}
		to := t
		if lim := f.limit.Load(); lim > 0 && t-now > lim {
			to = now + lim
		}
		if f.now.CompareAndSwap(now, to) {
			f.slept.Add(to - now)
			f.sleeps.Add(1)
			return nil
		}
	}
}

// Slept returns the total simulated sleep and the number of sleeps that moved the clock.
func (f *Fake) Slept() (time.Duration, int64) {
	return time.Duration(f.slept.Load()), f.sleeps.Load()
}
