package clock

import (
	"context"
	"testing"
	"time"
)

// stepClock is a clock that implements Timeouter by recording the timeout asked for.
type stepClock struct {
	Fake
	asked time.Duration
}

func (s *stepClock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	s.asked = d
	return context.WithCancel(parent)
}

func TestWithTimeoutUsesTimeouter(t *testing.T) {
	c := &stepClock{}
	ctx, cancel := WithTimeout(context.Background(), c, 3*time.Second)
	defer cancel()
	if c.asked != 3*time.Second {
		t.Fatalf("Timeouter asked for %v, want 3s", c.asked)
	}
	if _, ok := ctx.Deadline(); ok {
		t.Error("a Timeouter clock's context got a real deadline")
	}
	// Through an Offset too.
	c.asked = 0
	ctx2, cancel2 := WithTimeout(context.Background(), Offset{Parent: c, By: time.Second}, time.Minute)
	defer cancel2()
	if c.asked != time.Minute {
		t.Fatalf("Timeouter behind an Offset asked for %v, want 1m", c.asked)
	}
	if _, ok := ctx2.Deadline(); ok {
		t.Error("an Offset over a Timeouter got a real deadline")
	}
}

func TestWithTimeoutRealClockSetsDeadline(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), NewSystem(), time.Hour)
	defer cancel()
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) < 59*time.Minute {
		t.Fatalf("deadline %v, %v: want about an hour from now", dl, ok)
	}
}
