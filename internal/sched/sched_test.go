package sched

import (
	"testing"
	"time"
)

type simClock struct{ started int }

func (c *simClock) Go(f func())              { c.started++; f() }
func (c *simClock) PollEvery() time.Duration { return 7 * time.Millisecond }
func (c *simClock) IntN(n int) int           { return n - 1 }

// Outside a simulation every hook is the plain behaviour; a simulation's clock
// takes each over.
func TestHooks(t *testing.T) {
	done := make(chan struct{})
	Go(struct{}{}, func() { close(done) })
	<-done
	if PollEvery(struct{}{}) != 0 {
		t.Error("a plain clock got a simulation's behaviour")
	}
	if n := IntN(struct{}{}, 3); n < 0 || n >= 3 {
		t.Errorf("IntN = %d", n)
	}
	c := &simClock{}
	ran := false
	Go(c, func() { ran = true })
	if c.started != 1 || !ran || PollEvery(c) != 7*time.Millisecond || IntN(c, 5) != 4 {
		t.Error("a simulation's hooks were not used")
	}
}
