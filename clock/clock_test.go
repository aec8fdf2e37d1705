package clock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestSystemMonotonicAndNearWall(t *testing.T) {
	c := NewSystem()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := c.Now()
			for i := 0; i < 100000; i++ {
				n := c.Now()
				if n < last {
					t.Errorf("clock went back by %v", time.Duration(last-n))
					return
				}
				last = n
			}
		}()
	}
	wg.Wait()
	if d := time.Duration(c.Now() - time.Now().UnixNano()); d > time.Second || d < -time.Second {
		t.Errorf("system clock %v away from the wall clock", d)
	}
}

// A wall clock that stepped back does not move System back; one that stepped
// forward is followed at the next resync. The step is simulated by moving the anchor,
// which is what a wall-clock step looks like from inside System.
func TestSystemFollowsWallForwardOnly(t *testing.T) {
	c := NewSystem()
	before := c.Now()
	c.base += int64(10 * time.Second) // the wall clock now reads 10 s behind System
	c.nextCheck.Store(0)
	if got := c.Now(); got < before+int64(10*time.Second) {
		t.Fatalf("System moved back to follow a wall clock behind it")
	}
	if b := c.Behind(); b < 9*time.Second {
		t.Errorf("Behind = %v, want about 10s", b)
	}
	c.base -= int64(20 * time.Second) // now the wall clock is 10 s ahead
	c.nextCheck.Store(0)
	if d := time.Duration(time.Now().UnixNano() - c.Now()); d > time.Second {
		t.Errorf("System did not follow the wall clock forward: %v behind", d)
	}
}

func TestSystemSleepUntil(t *testing.T) {
	c := NewSystem()
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 5 * time.Millisecond} {
		target := c.Now() + int64(d)
		if err := c.SleepUntil(context.Background(), target); err != nil {
			t.Fatal(err)
		}
		if c.Now() < target {
			t.Errorf("SleepUntil(+%v) returned early", d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if err := c.SleepUntil(ctx, c.Now()+int64(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sleep returned %v", err)
	}
}

func TestFake(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFake(start)
	f.Add(-5 * time.Second)
	if !f.Time().Equal(start.Add(-5 * time.Second)) {
		t.Errorf("Add(-5s) = %v", f.Time())
	}
	if err := f.SleepUntil(context.Background(), start.UnixNano()); err != nil || !f.Time().Equal(start) {
		t.Errorf("SleepUntil = %v at %v", err, f.Time())
	}
	_ = f.SleepUntil(context.Background(), start.Add(-time.Hour).UnixNano()) // never back
	if d, n := f.Slept(); d != 5*time.Second || n != 1 || !f.Time().Equal(start) {
		t.Errorf("Slept = %v, %d at %v", d, n, f.Time())
	}
	f.LimitSleep(time.Millisecond)
	_ = f.SleepUntil(context.Background(), start.Add(time.Hour).UnixNano())
	if !f.Time().Equal(start.Add(time.Millisecond)) {
		t.Errorf("limited sleep moved the clock to %v", f.Time())
	}
	f.LimitSleep(0)
	f.Set(start)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.SleepUntil(ctx, start.Add(time.Hour).UnixNano()); !errors.Is(err, context.Canceled) || !f.Time().Equal(start) {
		t.Errorf("cancelled SleepUntil = %v, moved to %v", err, f.Time())
	}
}

func TestCoarse(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewCoarse(f, time.Millisecond)
	start := c.Now()
	f.Add(time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for c.Now() != f.Now() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if c.Now() != start+int64(time.Second) {
		t.Fatalf("coarse clock did not follow its parent: %d vs %d", c.Now(), f.Now())
	}
	f.Add(-time.Hour) // the cache never goes back
	time.Sleep(5 * time.Millisecond)
	if c.Now() != start+int64(time.Second) {
		t.Errorf("coarse clock went back with its parent")
	}
	f.Add(time.Hour)
	target := f.Now() + int64(time.Minute)
	if err := c.SleepUntil(context.Background(), target); err != nil || c.Now() < target {
		t.Errorf("SleepUntil: %v, now %d < %d", err, c.Now(), target)
	}
	c.Close()
	c.Close()
	f.Add(time.Hour)
	if c.Now() != f.Now() {
		t.Errorf("closed coarse clock does not read its parent")
	}
}

func TestOffset(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	o := Offset{Parent: f, By: -10 * time.Second}
	if o.Now() != f.Now()-int64(10*time.Second) {
		t.Errorf("offset clock %d", o.Now())
	}
	target := o.Now() + int64(time.Second)
	if err := o.SleepUntil(context.Background(), target); err != nil || o.Now() < target {
		t.Errorf("SleepUntil: %v", err)
	}
}

// A delay between a reading and the resync it triggers must not move the clock
// ahead of the wall clock (it did, by up to hundreds of milliseconds, when the
// resync took its own wall reading).
func TestSystemResyncIgnoresDelay(t *testing.T) {
	c := NewSystem()
	el := int64(time.Since(c.anchor))
	time.Sleep(20 * time.Millisecond) // the caller was descheduled after reading
	c.resync(el)
	if a := c.ahead.Load(); a > int64(time.Millisecond) {
		t.Errorf("resync after a 20ms delay moved the clock %v ahead", time.Duration(a))
	}
}
