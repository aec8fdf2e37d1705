package main

import (
	"strings"
	"testing"
	"time"
)

func TestSkewedClock(t *testing.T) {
	c, d, err := skewedClock("-10s")
	if err != nil || d != -10*time.Second {
		t.Fatalf("skewedClock: %v, %v", d, err)
	}
	if skew := time.Duration(c.Now() - time.Now().UnixNano()); skew > -9*time.Second || skew < -11*time.Second {
		t.Errorf("skewed clock is %v off", skew)
	}
	for _, v := range []string{"", "0s"} {
		if _, d, err := skewedClock(v); err != nil || d != 0 {
			t.Errorf("skewedClock(%q) = %v, %v; want no shift", v, d, err)
		}
	}
	if _, _, err := skewedClock("soon"); err == nil || !strings.Contains(err.Error(), `FLURRY_CLOCK_SKEW="soon" is not a duration`) {
		t.Errorf("bad skew: %v", err)
	}
}
