// Package clock tells generators the time.
//
// A [Clock] gives nanoseconds since the Unix epoch and can sleep until an instant.
// [System] is the real clock: it reads the wall clock once, then advances on Go's
// monotonic clock, so a wall-clock step backwards (NTP, an operator, a VM restore)
// does not move it back inside a process; it follows the wall clock forwards. [Fake]
// is for tests: it moves only when told, by any amount, backwards too.
package clock

import (
	"context"
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname
)

// Clock is the time source of a generator. Implementations must be safe for
// concurrent use.
type Clock interface {
	// Now returns the current time in nanoseconds since the Unix epoch.
	Now() int64
	// SleepUntil blocks until Now() >= t, or until ctx is done, in which case it
	// returns ctx.Err(). It returns at once when t has passed.
	SleepUntil(ctx context.Context, t int64) error
}

// resyncEvery is how often System compares itself with the wall clock. A forward step
// of the wall clock (or a resume from suspend, which the monotonic clock does not
// count) shows in System within this much monotonic time.
const resyncEvery = 50 * time.Millisecond

// System is the real clock, anchored on Go's monotonic clock. Its zero value is not
// usable; call [NewSystem].
type System struct {
	anchor    time.Time    // carries a monotonic reading
	mono      int64        // the runtime's monotonic clock (nanotime) at anchor, to within nanoseconds
	base      int64        // anchor's wall time, ns since the Unix epoch
	ahead     atomic.Int64 // how far the wall clock was seen ahead of base+elapsed; only grows
	nextCheck atomic.Int64 // monotonic elapsed ns at which to look at the wall clock again
}

// NewSystem returns a System clock anchored at the current wall time.
func NewSystem() *System {
	now := time.Now()
	return &System{anchor: now, mono: nanotime(), base: now.UnixNano()}
}

// nanotime is the runtime's monotonic clock, the one time.Since reads. Now calls it
// directly: time.Since adds about 45 instructions to the clock read itself (a
// wrapper, a check for a testing/synctest bubble, the monotonic arithmetic of
// time.Time), which is as much as the rest of an ID costs. The runtime keeps this
// name for outside callers ("Do not remove or change the type signature").
// Inside a testing/synctest bubble, System therefore keeps reading real time.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the anchored time: never less than a previous Now of this clock.
func (c *System) Now() int64 {
	el := nanotime() - c.mono
	if el >= c.nextCheck.Load() {
		c.resync(el)
	}
	return c.base + el + c.ahead.Load()
}

// resync moves the clock forward when the wall clock is ahead of it; never back.
// The wall and monotonic readings it compares come from one time.Now, so a delay
// between reading the clock and resyncing (a preemption, a busy machine) is not
// mistaken for the wall clock having jumped ahead.
func (c *System) resync(el int64) {
	c.nextCheck.Store(el + int64(resyncEvery))
	now := time.Now()
	wall, mono := now.UnixNano(), int64(now.Sub(c.anchor))
	for {
		a := c.ahead.Load()
		lag := wall - (c.base + mono + a)
		if lag <= 0 || c.ahead.CompareAndSwap(a, a+lag) {
			return
		}
	}
}

// Behind returns how far the wall clock is now behind this clock: zero normally,
// positive after the wall clock stepped back while the process ran.
func (c *System) Behind() time.Duration {
	d := c.Now() - time.Now().UnixNano()
	if d < 0 {
		return 0
	}
	return time.Duration(d)
}

// SleepUntil sleeps until Now() >= t. Waits under two milliseconds use the
// operating system's nanosleep where there is one, because the Go runtime rounds
// short timer sleeps up to about a millisecond; such a wait does not watch ctx, but
// never lasts longer than two milliseconds.
func (c *System) SleepUntil(ctx context.Context, t int64) error {
	for {
		d := time.Duration(t - c.Now())
		if d <= 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d < 2*time.Millisecond {
			preciseSleep(d)
			continue
		}
		if ctx.Done() == nil {
			time.Sleep(d)
			continue
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}
