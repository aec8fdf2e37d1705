package fastdiv

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// divisors are the layout units flurry ships and odd ones around powers of two,
// where the multiplier is at its largest.
func divisors() []int64 {
	ds := []int64{1, 2, 3, 5, 7, 10, 1000, int64(time.Microsecond), int64(time.Millisecond),
		10 * int64(time.Millisecond), 100 * int64(time.Millisecond), int64(time.Second),
		int64(time.Minute), int64(time.Hour), 24 * int64(time.Hour), 641, 6700417, 1<<31 - 1,
		math.MaxInt64, math.MaxInt64 - 1, 1 << 62, 1<<62 + 1, 1<<62 - 1}
	for s := 1; s < 63; s++ {
		ds = append(ds, 1<<s-1, 1<<s+1)
	}
	return ds
}

func check(t *testing.T, v Divisor, d, n int64) {
	t.Helper()
	if got, want := v.Div(n), n/d; got != want {
		t.Fatalf("Div(%d) by %d = %d, want %d", n, d, got, want)
	}
	if d == 1 && v.Shifts() || d > 1 && d < 1<<62 && !v.Shifts() {
		t.Fatalf("Shifts() for %d = %v", d, v.Shifts())
	}
	if got, want := v.DivShift(n), n/d; v.Shifts() && got != want {
		t.Fatalf("DivShift(%d) by %d = %d, want %d", n, d, got, want)
	}
}

func TestDivAgainstHardware(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range divisors() {
		v := New(d)
		if v.Divisor() != d {
			t.Fatalf("Divisor() = %d, want %d", v.Divisor(), d)
		}
		// The edges: around every multiple of d near 0, near 2^63 and near
		// today's clock reading in nanoseconds since 2020.
		for _, base := range []int64{0, math.MaxInt64 / d * d, time.Now().UnixNano() / d * d, (math.MaxInt64 / 2) / d * d} {
			for k := int64(-3); k <= 3; k++ {
				for delta := int64(-2); delta <= 2; delta++ {
					n := base + k*d + delta
					if n >= 0 && (k <= 0 || base+k*d > base) { // skip overflowed sums
						check(t, v, d, n)
					}
				}
			}
		}
		for range 20000 {
			check(t, v, d, r.Int64())
			check(t, v, d, r.Int64N(1<<40))
		}
	}
}

func TestSmallExhaustive(t *testing.T) {
	for d := int64(1); d <= 300; d++ {
		v := New(d)
		for n := int64(0); n < 20000; n++ {
			check(t, v, d, n)
		}
	}
}

func TestNewRejectsNonPositive(t *testing.T) {
	for _, d := range []int64{0, -1, math.MinInt64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%d) did not panic", d)
				}
			}()
			New(d)
		}()
	}
}

func FuzzDiv(f *testing.F) {
	f.Add(int64(1_000_000), int64(1_700_000_000_000_000_000))
	f.Add(int64(3), int64(math.MaxInt64))
	f.Add(int64(1<<62+1), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, d, n int64) {
		if d <= 0 || n < 0 {
			return
		}
		check(t, New(d), d, n)
	})
}

func BenchmarkDiv(b *testing.B) {
	v := New(int64(time.Millisecond))
	n := time.Now().UnixNano()
	var sink int64
	for b.Loop() {
		sink += v.Div(n)
		n++
	}
	_ = sink
}

// hwDivisor is a variable, so that the compiler cannot turn the division into a
// multiplication as it does for a constant.
var hwDivisor = int64(time.Millisecond)

func BenchmarkHardwareDiv(b *testing.B) {
	d := hwDivisor
	n := time.Now().UnixNano()
	var sink int64
	for b.Loop() {
		sink += n / d
		n++
	}
	_ = sink
}
