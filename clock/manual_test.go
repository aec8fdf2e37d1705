package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestManualSleepersWaitForTheTest(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m := NewManual(start)
	if m.Now() != start.UnixNano() || !m.Time().Equal(start) {
		t.Fatalf("NewManual(%v) stands at %v", start, m.Time())
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.SleepUntil(done, m.Now()); err != nil {
		t.Errorf("sleep until now: %v; want nil even with a done context", err)
	}
	if err := m.SleepUntil(done, m.Now()+1); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep past now with a done context: %v; want context.Canceled", err)
	}
	if m.Now() != start.UnixNano() {
		t.Errorf("sleeping moved the clock to %v", m.Time())
	}

	target := m.Now() + int64(10*time.Millisecond)
	woke := make(chan int64)
	go func() {
		if err := m.SleepUntil(context.Background(), target); err != nil {
			t.Error(err)
		}
		woke <- m.Now()
	}()
	m.Add(4 * time.Millisecond)
	m.Set(start.Add(-time.Second)) // a step back wakes the sleeper, which sleeps on
	m.Set(start.Add(9 * time.Millisecond))
	m.Add(time.Millisecond)
	if at := <-woke; at < target {
		t.Errorf("the sleeper woke at %v, before %v", time.Unix(0, at).UTC(), time.Unix(0, target).UTC())
	}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- m.SleepUntil(ctx, m.Now()+int64(time.Hour)) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled sleep: %v; want context.Canceled", err)
	}
}

// TestManualSleepers: Sleepers counts the goroutines inside SleepUntil, so that a
// test can move the clock after the code under test went to sleep on it.
func TestManualSleepers(t *testing.T) {
	m := NewManual(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	if n := m.Sleepers(); n != 0 {
		t.Fatalf("%d sleepers before any sleep", n)
	}
	done := make(chan struct{})
	go func() {
		m.SleepUntil(context.Background(), m.Now()+int64(time.Second))
		close(done)
	}()
	for deadline := time.Now().Add(10 * time.Second); m.Sleepers() != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sleepers; want the one", m.Sleepers())
		}
		time.Sleep(time.Millisecond)
	}
	m.Add(time.Second)
	<-done
	if n := m.Sleepers(); n != 0 {
		t.Errorf("%d sleepers after the sleeper woke", n)
	}
}
