package main

import (
	"strconv"
	"testing"
	"time"
)

// FuzzParseCount: any text either parses to a count that prints back to a number
// parseCount reads as the same count, or is refused; never a panic.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"1", "1e6", "1_000_000", "-1", "1.5", "NaN", "1e30", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseCount(s)
		if err != nil {
			return
		}
		back, err := parseCount(strconv.FormatUint(v, 10))
		if err != nil || back != v {
			t.Fatalf("%q -> %d -> %d, %v", s, v, back, err)
		}
	})
}

// FuzzParseEpoch: any text either parses to an instant that its RFC 3339 form parses
// back to, or is refused; never a panic.
func FuzzParseEpoch(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:00:00Z", "2026-01-01", "1288834974657", "-5", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseEpoch(s)
		if err != nil {
			return
		}
		back, err := parseEpoch(e.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(e) {
			t.Fatalf("%q -> %v -> %v, %v", s, e, back, err)
		}
	})
}
