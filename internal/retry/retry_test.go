package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPauseBounds(t *testing.T) {
	b := Backoff{Min: 100 * time.Microsecond, First: 2 * time.Millisecond, Max: 64 * time.Millisecond}
	for attempt := 1; attempt <= 10; attempt++ {
		limit := min(2*time.Millisecond<<(attempt-1), 64*time.Millisecond)
		seen := map[time.Duration]bool{}
		for range 200 {
			d := b.Pause(attempt)
			if d < b.Min || d >= b.Min+limit {
				t.Fatalf("Pause(%d) = %v; want in [%v, %v)", attempt, d, b.Min, b.Min+limit)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("Pause(%d) gave one value 200 times: no jitter", attempt)
		}
	}
	if d := (Backoff{}).Pause(3); d != 0 {
		t.Errorf("zero Backoff pauses %v", d)
	}
	if d := (Backoff{First: time.Millisecond}).Pause(20); d >= time.Millisecond {
		t.Errorf("Backoff without Max grew to %v", d)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v", err)
	}
	if err := Sleep(context.Background(), time.Microsecond); err != nil {
		t.Errorf("Sleep: %v", err)
	}
}

func TestDo(t *testing.T) {
	transient := errors.New("transient")
	final := errors.New("final")
	isTransient := func(err error) bool { return errors.Is(err, transient) }
	b := Backoff{First: time.Microsecond}
	ctx := context.Background()

	n := 0
	err := Do(ctx, 5, b, isTransient, func() error { n++; return transient })
	if !errors.Is(err, transient) || n != 5 {
		t.Errorf("always transient: %v after %d runs; want 5", err, n)
	}
	n = 0
	err = Do(ctx, 5, b, isTransient, func() error { n++; return final })
	if !errors.Is(err, final) || n != 1 {
		t.Errorf("not retryable: %v after %d runs; want 1", err, n)
	}
	n = 0
	err = Do(ctx, 5, b, isTransient, func() error {
		if n++; n < 3 {
			return transient
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("succeeds third: %v after %d runs", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = Do(cctx, 5, Backoff{First: time.Hour}, isTransient, func() error { return transient })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during the pause: %v", err)
	}
}
