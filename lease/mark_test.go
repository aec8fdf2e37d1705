package lease

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The one reservation formula gives what acquisition and renewal each computed
// before they shared it (max(above, now) + ahead, and max(held, now + ahead) once
// held is at least above + ahead), and every bound its comment promises.
func TestReservation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := 0; i < 100000; i++ {
		now := base + r.Int64N(int64(time.Hour))
		ahead := time.Duration(100+r.Int64N(3_600_000)) * time.Millisecond
		aheadMs := unixMilli(ahead.Milliseconds())
		// Marks around the clock: behind it, at it, ahead of it by up to an hour.
		above := milliOf(now) + unixMilli(r.Int64N(2*3_600_000)-3_600_000)

		got := reservation(above, above, now, ahead)
		if want := max(above, unixMilli(now/1e6)) + aheadMs; got != want {
			t.Fatalf("acquisition: reservation(%d, %d, %d, %v) = %d; want %d", above, above, now, ahead, got, want)
		}
		held := above + aheadMs + unixMilli(r.Int64N(3_600_000))
		renewed := reservation(held, above, now, ahead)
		if want := max(held, unixMilli(now/1e6)+aheadMs); renewed != want {
			t.Fatalf("renewal: reservation(%d, %d, %d, %v) = %d; want %d", held, above, now, ahead, renewed, want)
		}
		for _, c := range []struct{ held, got unixMilli }{{above, got}, {held, renewed}} {
			if c.got < c.held || c.got < above+aheadMs || c.got < milliOf(now)+aheadMs {
				t.Fatalf("reservation %d: below held %d, above %d + %d or the clock %d + %d", c.got, c.held, above, aheadMs, milliOf(now), aheadMs)
			}
		}
	}
}

func TestUnixMilli(t *testing.T) {
	at := time.Date(2026, 11, 23, 18, 30, 0, 999_999_999, time.UTC)
	m := milliOf(at.UnixNano())
	if m != unixMilli(at.UnixMilli()) || !m.time().Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("milliOf(%v) = %d (%v)", at, m, m.time())
	}
	if m.ns() != at.Truncate(time.Millisecond).UnixNano() {
		t.Errorf("%d.ns() = %d", m, m.ns())
	}
}
