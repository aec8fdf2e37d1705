package main

import (
	"fmt"
	"time"

	"github.com/flurryid/flurry/clock"
)

// skewEnv is the environment variable that shifts the clock of `flurry gen` and
// `flurry serve` for tests of clock steps across processes, e.g.
// FLURRY_CLOCK_SKEW=-10s (the fault harness restarts a server with it). It is not
// for production, and the process says so loudly when it is set.
const skewEnv = "FLURRY_CLOCK_SKEW"

// skewedClock returns the system clock, shifted by v (the value of skewEnv) when v
// is a non-zero duration, and the shift.
func skewedClock(v string) (clock.Clock, time.Duration, error) {
	sys := clock.NewSystem()
	if v == "" {
		return sys, 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, 0, fmt.Errorf("clock: %s=%q is not a duration such as -10s: %v", skewEnv, v, err)
	}
	if d == 0 {
		return sys, 0, nil
	}
	return clock.Offset{Parent: sys, By: d}, d, nil
}
