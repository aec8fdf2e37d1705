package client

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The hedge delay of a server is a high percentile of its recent successful round
// trips: a request slower than nearly all of them is more likely stuck (a dead
// process, a dropped route) than slow, and asking another server then costs one
// request while waiting costs up to Timeout. The 95th percentile of 64 samples
// ignores three outliers (a garbage collection, a busy neighbour) and follows a
// change of the server's speed within 64 requests; hedges then go out for about one
// request in twenty at most, and for none while round trips stay below
// Options.HedgeMinDelay.
const (
	latencyWindow   = 64
	hedgePercentile = 0.95
)

// latency keeps a server's last successful round trips and the percentile of them
// that its hedge delay follows.
type latency struct {
	mu   sync.Mutex
	ring [latencyWindow]time.Duration
	n    int // samples recorded in all; the next goes to ring[n%latencyWindow]
	// p is the percentile of the samples, in nanoseconds; zero before the first.
	p atomic.Int64
}

// record adds one successful round trip. Sorting 64 durations costs about a
// microsecond, once per request (not per ID), and keeps hedgeDelay a single load.
func (l *latency) record(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ring[l.n%latencyWindow] = max(d, 1)
	l.n++
	var buf [latencyWindow]time.Duration
	s := buf[:min(l.n, latencyWindow)]
	copy(s, l.ring[:len(s)])
	slices.Sort(s)
	l.p.Store(int64(s[int(math.Ceil(hedgePercentile*float64(len(s))))-1]))
}

// hedgeDelay returns how long a request to s waits for an answer before the next
// server is asked too: the percentile of s's round trips within the bounds, the
// upper bound before its first answer, and zero when hedging is off.
func (c *Client) hedgeDelay(s *server) time.Duration {
	if !c.hedge {
		return 0
	}
	p := time.Duration(s.lat.p.Load())
	if p == 0 {
		return c.hedgeMax
	}
	return min(max(p, c.hedgeMin), c.hedgeMax)
}
