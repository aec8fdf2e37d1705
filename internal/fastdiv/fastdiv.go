// Package fastdiv divides by a divisor known only at run time with a multiply and
// a shift instead of a hardware divide, which costs 10 to 40 cycles on the CPUs
// flurry runs on and sits on snowflake's hot path (the clock reading divided by
// the layout's unit, on every ID).
//
// The method is Granlund and Montgomery's ("Division by Invariant Integers using
// Multiplication", 1994, theorem 4.2), for dividends below 2^63: with
// l = ceil(log2 d) and m = floor(2^(63+l)/d) + 1,
//
//	2^(63+l) < m*d <= 2^(63+l) + d <= 2^(63+l) + 2^l,
//
// and for every n < 2^63 that makes floor(m*n / 2^(63+l)) = floor(n/d). m is
// below 2^64 (d > 2^(l-1) gives m <= 2^64, with equality only for l near 64, which
// New checks), so the product is one bits.Mul64 and the quotient its high word
// shifted right by l-1. Powers of two take the same path (m = 2^63 + 1), so that Div
// has one branch; only d = 1 (l = 0) is a shift.
package fastdiv

import "math/bits"

// Divisor divides non-negative int64 values by a fixed positive divisor. The zero
// Divisor is not usable; make one with New.
type Divisor struct {
	d     uint64
	m     uint64 // 0: d is 1, or m would not fit (divide)
	shift uint8  // l-1 with m
}

// New returns a Divisor for d, which must be positive.
func New(d int64) Divisor {
	if d <= 0 {
		panic("fastdiv: divisor must be positive")
	}
	u := uint64(d)
	if u == 1 {
		return Divisor{d: u}
	}
	l := uint(bits.Len64(u - 1)) // ceil(log2 d), at least 1 here
	// 2^(63+l) as a 128-bit number is hi = 2^(l-1), lo = 0; hi < d, so Div64 is
	// defined and its quotient fits in 64 bits.
	q, _ := bits.Div64(uint64(1)<<(l-1), 0, u)
	if q == ^uint64(0) {
		return Divisor{d: u} // m = 2^64: divide (not reached for d < 2^62)
	}
	return Divisor{d: u, m: q + 1, shift: uint8(l - 1)}
}

// Div returns n / d for 0 <= n (the result for a negative n is unspecified).
func (v Divisor) Div(n int64) int64 {
	if v.m != 0 {
		hi, _ := bits.Mul64(uint64(n)&(1<<63-1), v.m)
		return int64(hi >> (v.shift & 63))
	}
	if v.d == 1 {
		return n
	}
	return int64(uint64(n) / v.d)
}

// Shifts reports whether Div is a multiply and a shift, as it is for every d from 2
// to 2^62; DivShift is then Div without its one branch.
func (v Divisor) Shifts() bool { return v.m != 0 }

// DivShift returns n / d for 0 <= n, for a Divisor whose Shifts is true (for
// another it returns 0). Unlike Div it does not clear n's sign bit first: a caller
// on a hot path has already checked that n is not negative, and the result for a
// negative n is unspecified.
func (v Divisor) DivShift(n int64) int64 {
	hi, _ := bits.Mul64(uint64(n), v.m)
	return int64(hi >> (v.shift & 63))
}

// Divisor returns d.
func (v Divisor) Divisor() int64 { return int64(v.d) }
