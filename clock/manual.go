package clock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Manual is a clock for tests that moves only when the test moves it, and whose
// sleepers wait for that: SleepUntil blocks until Set or Add has brought the clock to
// the instant asked for, or until its context is done.
//
// Use it for code that sleeps on its clock in a loop of its own, such as a lease
// session renewing in the background. [Fake]'s SleepUntil moves the clock forward at
// once, so such a loop, sharing the clock with the code the test drives, would race
// the fake time ahead of the test; with Manual that loop runs exactly when, and as
// often as, the test moves the clock.
//
// Deadlines taken with [WithTimeout] on a Manual are in real time, as on Fake: a
// Manual is not a [Timeouter]. The zero Manual is not usable; call [NewManual].
type Manual struct {
	now   atomic.Int64
	mu    sync.Mutex
	moved chan struct{} // closed, and replaced, each time the clock moves

	sleepers atomic.Int32 // goroutines inside SleepUntil
}

// NewManual returns a Manual clock standing at t.
func NewManual(t time.Time) *Manual {
	m := &Manual{moved: make(chan struct{})}
	m.now.Store(t.UnixNano())
	return m
}

// Now returns the clock's time in nanoseconds since the Unix epoch.
func (m *Manual) Now() int64 { return m.now.Load() }

// Time returns the clock's time as a time.Time in UTC.
func (m *Manual) Time() time.Time { return time.Unix(0, m.now.Load()).UTC() }

// Set moves the clock to t, backwards or forwards, and wakes the sleepers, which go
// back to sleep unless t is at or past the instant they wait for.
func (m *Manual) Set(t time.Time) {
	m.now.Store(t.UnixNano())
	m.wake()
}

// Add moves the clock by d (a negative d is a step backwards) and wakes the sleepers,
// which go back to sleep unless the clock is at or past the instant they wait for.
func (m *Manual) Add(d time.Duration) {
	m.now.Add(int64(d))
	m.wake()
}

func (m *Manual) wake() {
	m.mu.Lock()
	close(m.moved)
	m.moved = make(chan struct{})
	m.mu.Unlock()
}

// SleepUntil blocks until Now() >= t, or until ctx is done, in which case it returns
// ctx.Err(). It returns at once when t has passed.
func (m *Manual) SleepUntil(ctx context.Context, t int64) error {
	m.sleepers.Add(1)
	defer m.sleepers.Add(-1)
	for {
		// Take the channel before reading the time: a move between the two closes
		// this channel, so it is never missed.
		m.mu.Lock()
		moved := m.moved
		m.mu.Unlock()
		if m.Now() >= t {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		}
	}
}

// Sleepers returns how many goroutines are inside SleepUntil. A test that moves the
// clock to wake code sleeping on it waits for the sleeper first: moved before the
// code computed its deadline, the clock would push that deadline out by the move.
func (m *Manual) Sleepers() int { return int(m.sleepers.Load()) }
