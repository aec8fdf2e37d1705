package lease_test

import (
	"testing"
	"time"
)

// waitBound bounds every wait of waitFor: far longer than any condition takes on a
// loaded machine, so that reaching it means the condition never came, not that the
// machine was slow.
const waitBound = 30 * time.Second

// waitFor polls cond until it holds, and fails the test, naming what it waited for,
// when it has not held within waitBound. Tests wait on the state they need instead
// of sleeping for a time that a loaded machine can overrun.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitBound, what)
		}
		time.Sleep(time.Millisecond)
	}
}
