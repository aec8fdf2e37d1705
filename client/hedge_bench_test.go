package client

import (
	"context"
	"fmt"
	"math/bits"
	"net/url"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// BenchmarkHedgedFailover measures what a server that stops answering costs the
// callers, with hedging on and off: two real servers in this process (package
// server, leasing distinct node values from one file store), each behind a
// testenv.Proxy. Each iteration is one round: the proxy of the server in use hangs
// (accepts, holds every byte, answers nothing: a stopped process or a route that
// drops packets), the other one is restored, and callsPerRound calls follow.
// Reported: the latency of those calls over every round, p50, p99 and max, and how
// many waited above 100 ms.
//
// fetch: each call is one Fetch of 1,000 IDs, one request. next: each call is
// one Next with the default Options (adaptive batches, refilled ahead of need), so
// a call waits only when a refill did not come in time.
//
// A round without hedging lasts Timeout (2 s): do a fixed count of rounds.
//
//	go test -run XXX -bench HedgedFailover -benchtime 20x ./client/
func BenchmarkHedgedFailover(b *testing.B) {
	for _, mode := range []string{"fetch", "next"} {
		for _, tr := range []Transport{HTTP, GRPC} {
			for _, hedge := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s/%s/hedge=%v", mode, tr, hedge), func(b *testing.B) {
					benchHedgedFailover(b, mode, tr, hedge)
				})
			}
		}
	}
}

func benchHedgedFailover(b *testing.B, mode string, tr Transport, hedge bool) {
	store := "file://" + b.TempDir()
	var proxies [2]*testenv.Proxy
	var servers []string
	for i := range proxies {
		u, err := url.Parse(startRealServerLease(b, store))
		if err != nil {
			b.Fatal(err)
		}
		proxies[i] = testenv.StartProxy(b, u.Host)
		servers = append(servers, "http://"+proxies[i].Addr())
	}
	c, err := New(Options{Servers: servers, Transport: tr, NoHedge: !hedge})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ns := c.Namespace("default")
	callsPerRound := 50
	call := func() error {
		_, _, err := c.Fetch(ctx, "default", 1000)
		return err
	}
	if mode == "next" {
		callsPerRound = 1_000_000 // more than the most a buffer holds (400,000 + 100,000)
		call = func() error {
			_, err := ns.Next(ctx)
			return err
		}
	}
	for range callsPerRound { // connections open, round trips measured
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	var h latencyHistogram
	b.ResetTimer()
	for range b.N {
		inUse := int(c.last.Load())
		proxies[1-inUse].Restore()
		proxies[inUse].Hang()
		for range callsPerRound {
			t0 := time.Now()
			if err := call(); err != nil {
				b.Fatal(err)
			}
			h.add(time.Since(t0))
		}
	}
	b.StopTimer()
	var won int64
	for _, s := range c.Stats() {
		won += s.HedgesWon
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(h.quantile(0.5)), "p50-ms")
	b.ReportMetric(ms(h.quantile(0.99)), "p99-ms")
	b.ReportMetric(ms(h.max), "max-ms")
	b.ReportMetric(float64(h.above(100*time.Millisecond)), "waits>100ms")
	b.ReportMetric(float64(won), "hedges-won")
}

// latencyHistogram counts durations in log-linear buckets (HdrHistogram's scheme:
// exact below 128 ns, then 64 buckets per power of two, at most 1.6% wide), so a
// round of a million Next calls costs no memory per call.
type latencyHistogram struct {
	counts [128 + 64*40]int64
	n      int64
	max    time.Duration
}

func (h *latencyHistogram) add(d time.Duration) {
	h.counts[bucketOf(d)]++
	h.n++
	h.max = max(h.max, d)
}

func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < 128 {
		return int(v)
	}
	e := bits.Len64(v) - 7 // v>>e is in [64, 128)
	return min(128+(e-1)*64+int(v>>e)-64, len(latencyHistogram{}.counts)-1)
}

// lowest returns the smallest duration of bucket i.
func lowest(i int) time.Duration {
	if i < 128 {
		return time.Duration(i)
	}
	e := (i-128)/64 + 1
	return time.Duration(uint64((i-128)%64+64) << e)
}

// quantile returns the lower bound of the bucket holding the q-quantile.
func (h *latencyHistogram) quantile(q float64) time.Duration {
	rank := int64(q * float64(h.n))
	for i, c := range h.counts {
		if rank < c {
			return lowest(i)
		}
		rank -= c
	}
	return h.max
}

// above returns how many durations were above d (to the bucket's width).
func (h *latencyHistogram) above(d time.Duration) int64 {
	var n int64
	for i := bucketOf(d) + 1; i < len(h.counts); i++ {
		n += h.counts[i]
	}
	return n
}

func TestLatencyHistogram(t *testing.T) {
	var h latencyHistogram
	for i := range 1000 {
		h.add(time.Duration(i+1) * time.Millisecond)
	}
	h.add(5) // below 128 ns: exact
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}} {
		if got := h.quantile(tc.q); got > tc.want || got < tc.want*98/100 {
			t.Errorf("quantile(%v) = %v, want %v less at most 2%%", tc.q, got, tc.want)
		}
	}
	if h.quantile(0) != 5 || h.max != time.Second {
		t.Errorf("min %v max %v, want 5ns and 1s", h.quantile(0), h.max)
	}
	if n := h.above(100 * time.Millisecond); n < 895 || n > 900 {
		t.Errorf("%d above 100ms, want about 900", n)
	}
	for _, d := range []time.Duration{0, 127, 128, 129, 1000, time.Second, time.Hour} {
		if lo := lowest(bucketOf(d)); lo > d || lo < d*98/100 {
			t.Errorf("%v falls in the bucket from %v", d, lo)
		}
	}
}
