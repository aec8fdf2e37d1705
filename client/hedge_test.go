package client

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/verify/testenv"
)

// Hedging is tested without a clock: the per-request Timeout is an hour, so a call
// that returns at all was answered by a hedge (or the hung server failing, which
// the counts rule out), and the counts say which server answered.

// hungServers are the two ways a server stops answering: a process that accepts a
// request and never answers it, and a network that drops packets (a listener
// that accepts connections and never reads or writes).
var hungServers = map[string]func(t *testing.T) string{
	"handler": func(t *testing.T) string {
		s := newTestServer(t)
		s.svc.mode.Store(modeHang)
		return s.URL
	},
	"blackhole": func(t *testing.T) string { return "http://" + testenv.StartBlackhole(t) },
}

// TestHedgeAroundHungServer puts a server that never answers first, next to a live
// one: every call is answered, by a hedge, and once out-hedged the hung server is
// passed over rather than asked (and waited for) on every call.
func TestHedgeAroundHungServer(t *testing.T) {
	for _, name := range []string{"handler", "blackhole"} {
		for _, tr := range []Transport{HTTP, GRPC} {
			t.Run(name+"/"+tr.String(), func(t *testing.T) {
				hung := hungServers[name](t)
				live := newTestServer(t)
				c, err := New(Options{Servers: []string{hung, live.URL}, Transport: tr, Batch: 10, LowWater: -1, Timeout: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// Only so that a client that waits for the hung server fails
				// instead of hanging the test for an hour.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				seen := map[flurry.ID]bool{}
				add := func(id flurry.ID) {
					if seen[id] {
						t.Fatalf("ID %d handed out twice", id)
					}
					seen[id] = true
				}
				const fetches, nexts = 30, 300 // 30 requests by Fetch, 30 refills by Next
				for i := range fetches {
					ids, _, err := c.Fetch(ctx, "default", 10)
					if err != nil {
						t.Fatalf("Fetch %d: %v", i, err)
					}
					for _, id := range ids {
						add(id)
					}
				}
				for i := range nexts {
					id, err := c.Next(ctx, "default")
					if err != nil {
						t.Fatalf("Next %d: %v", i, err)
					}
					add(id)
				}
				st := c.Stats()
				t.Logf("stats: %+v", st)
				if st[1].Hedges == 0 || st[1].HedgesWon == 0 {
					t.Errorf("the live server answered no hedge: %+v", st[1])
				}
				if st[0].OutHedged == 0 {
					t.Errorf("no request to the hung server was out-hedged: %+v", st[0])
				}
				if st[0].Failures != 0 {
					t.Errorf("the hung server failed %d times; with an hour's Timeout only a hedge can answer", st[0].Failures)
				}
				// Out-hedged, the hung server is passed over: it is asked again
				// only as a hedge of a slow answer, not first on every call.
				if calls := int64(fetches + nexts/10); st[0].Requests > calls/2 {
					t.Errorf("the hung server was asked %d times in %d calls; once out-hedged it must be passed over", st[0].Requests, calls)
				}
				if int(c.last.Load()) != 1 {
					t.Errorf("the client's first choice is server %d, want the live one", c.last.Load())
				}
			})
		}
	}
}

// TestRefillIsHedged: the background refill (prefetch below the low-water mark)
// is hedged too, so the buffer fills again while its first server hangs, and no
// caller has to wait for it.
func TestRefillIsHedged(t *testing.T) {
	for _, tr := range []Transport{HTTP, GRPC} {
		t.Run(tr.String(), func(t *testing.T) {
			servers := []*testServer{newTestServer(t), newTestServer(t)}
			c := newTestClient(t, Options{Transport: tr, Batch: 100, LowWater: 50, Timeout: time.Hour}, servers...)
			ns := c.Namespace("default")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := ns.Next(ctx); err != nil {
				t.Fatal(err)
			}
			// Hang the server in use, then drain to just below the low-water
			// mark: the refill that starts goes to the hung server first.
			inUse := int(c.last.Load())
			servers[inUse].svc.mode.Store(modeHang)
			for ns.Buffered() >= 50 {
				if _, err := ns.Next(ctx); err != nil {
					t.Fatal(err)
				}
			}
			left := ns.Buffered()
			// A liveness bound, not a timing assertion: the refill must land
			// without any caller asking, long before Timeout (an hour).
			for ns.Buffered() <= left {
				if ctx.Err() != nil {
					t.Fatalf("the background refill did not complete (buffered %d): it waits on the hung server", ns.Buffered())
				}
				time.Sleep(time.Millisecond)
			}
			st := c.Stats()
			other := 1 - inUse
			if st[other].Hedges == 0 || st[other].HedgesWon == 0 {
				t.Errorf("the refill was not hedged to the other server: %+v", st)
			}
			if st[inUse].OutHedged == 0 || st[inUse].Failures != 0 {
				t.Errorf("the hung server's request was not out-hedged: %+v", st[inUse])
			}
			if servers[inUse].svc.calls.Load() < 2 {
				t.Errorf("the refill never reached the hung server: %d calls", servers[inUse].svc.calls.Load())
			}
		})
	}
}

// TestHedgedIDsNeverTwice hedges every request at once, so that both servers answer
// most requests and one answer of each pair is dropped, under concurrent callers:
// no ID comes twice, and one call's IDs all come from one answer.
func TestHedgedIDsNeverTwice(t *testing.T) {
	for _, tr := range []Transport{HTTP, GRPC} {
		t.Run(tr.String(), func(t *testing.T) {
			a, b := newTestServer(t), newTestServer(t)
			c := newTestClient(t, Options{Transport: tr, Batch: 50, HedgeMinDelay: time.Nanosecond, HedgeMaxDelay: time.Nanosecond}, a, b)
			const workers, each, fetchers, fetches = 8, 2000, 2, 100
			got := make([][]flurry.ID, workers+fetchers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					ns := c.Namespace("default")
					for range each {
						id, err := ns.Next(context.Background())
						if err != nil {
							t.Error(err)
							return
						}
						got[w] = append(got[w], id)
					}
				})
			}
			for f := range fetchers {
				wg.Go(func() {
					for range fetches {
						ids, _, err := c.Fetch(context.Background(), "default", 20)
						if err != nil {
							t.Error(err)
							return
						}
						// One answer: one node (the layout's worker field,
						// above 16 sequence bits), increasing.
						for i, id := range ids {
							if node(id) != node(ids[0]) || (i > 0 && id <= ids[i-1]) {
								t.Errorf("one Fetch mixes answers: %v", ids)
								return
							}
						}
						got[workers+f] = append(got[workers+f], ids...)
					}
				})
			}
			wg.Wait()
			seen := make(map[flurry.ID]bool)
			for _, ids := range got {
				for _, id := range ids {
					if seen[id] {
						t.Fatalf("ID %d handed out twice", id)
					}
					seen[id] = true
				}
			}
			if want := workers*each + fetchers*fetches*20; len(seen) != want {
				t.Fatalf("%d IDs, want %d", len(seen), want)
			}
			var hedges, won int64
			for _, s := range c.Stats() {
				hedges += s.Hedges
				won += s.HedgesWon
			}
			t.Logf("stats: %+v", c.Stats())
			if hedges == 0 {
				t.Fatal("no request was hedged with a hedge delay of 1ns")
			}
			if a.svc.calls.Load() == 0 || b.svc.calls.Load() == 0 {
				t.Errorf("not both servers were asked: %d and %d calls", a.svc.calls.Load(), b.svc.calls.Load())
			}
			t.Logf("%d hedges, %d won", hedges, won)
		})
	}
}

func node(id flurry.ID) int64 { return int64(id) >> 16 & 63 }

// TestOutHedgedServerComesBack: a server passed over after being out-hedged is used
// again when it answers.
func TestOutHedgedServerComesBack(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	a.svc.mode.Store(modeHang)
	c := newTestClient(t, Options{Batch: 10, Timeout: time.Hour, Backoff: time.Hour}, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Next(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st[0].OutHedged != 1 || st[0].DownUntil.IsZero() || st[0].LastError == nil {
		t.Fatalf("the hung server was not passed over: %+v", st[0])
	}
	// It answers again, and the other one dies: the next refill goes to it
	// although it is in backoff for an hour, and clears it.
	a.svc.mode.Store(modeOK)
	b.kill()
	for range 20 {
		if _, err := c.Next(ctx, "default"); err != nil {
			t.Fatal(err)
		}
	}
	st = c.Stats()
	if !st[0].DownUntil.IsZero() || st[0].LastError != nil || int(c.last.Load()) != 0 {
		t.Errorf("the server that answers again is still passed over: %+v", st[0])
	}
}

// TestNoHedge: with hedging off, a hung server is given up on only at Timeout.
func TestNoHedge(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	a.svc.mode.Store(modeHang)
	c := newTestClient(t, Options{Batch: 10, Timeout: 50 * time.Millisecond, NoHedge: true}, a, b)
	if _, err := c.Next(context.Background(), "default"); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st[1].Hedges != 0 || st[0].OutHedged != 0 || st[0].Failures != 1 || st[0].HedgeDelay != 0 {
		t.Errorf("stats %+v, want no hedge and one timeout", st)
	}
}

// TestHedgeDelayFollowsRoundTrips feeds chosen round trips: the delay is the 95th
// percentile of the last 64, within the bounds, and the upper bound before any.
func TestHedgeDelayFollowsRoundTrips(t *testing.T) {
	c := &Client{hedge: true, hedgeMin: 10 * time.Millisecond, hedgeMax: 100 * time.Millisecond}
	s := &server{}
	if d := c.hedgeDelay(s); d != 100*time.Millisecond {
		t.Errorf("before any answer: %v, want the upper bound", d)
	}
	for i := range 64 {
		s.lat.record(time.Duration(i+1) * time.Millisecond)
	}
	if d := c.hedgeDelay(s); d != 61*time.Millisecond {
		t.Errorf("round trips of 1..64ms: %v, want 61ms (the 95th percentile)", d)
	}
	for range 61 {
		s.lat.record(time.Millisecond)
	}
	for range 3 {
		s.lat.record(time.Second)
	}
	if d := c.hedgeDelay(s); d != 10*time.Millisecond {
		t.Errorf("61 of 1ms and 3 of 1s: %v, want the lower bound", d)
	}
	s.lat.record(time.Second) // 4 slow of the last 64: above the 95th percentile
	if d := c.hedgeDelay(s); d != 100*time.Millisecond {
		t.Errorf("4 of 64 round trips of 1s: %v, want the upper bound", d)
	}
	c.hedge = false
	if d := c.hedgeDelay(s); d != 0 {
		t.Errorf("with NoHedge: %v, want 0", d)
	}
}

func TestHedgeOptions(t *testing.T) {
	for _, tc := range []struct {
		min, max         time.Duration
		wantMin, wantMax time.Duration
		err              bool
	}{
		{0, 0, DefaultHedgeMinDelay, DefaultHedgeMaxDelay, false},
		{time.Millisecond, 0, time.Millisecond, DefaultHedgeMaxDelay, false},
		{time.Second, 0, time.Second, time.Second, false},
		{0, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, false},
		{0, time.Second, DefaultHedgeMinDelay, time.Second, false},
		{-1, 0, 0, 0, true},
		{0, -1, 0, 0, true},
		{time.Second, time.Millisecond, 0, 0, true},
	} {
		t.Run(fmt.Sprintf("%v,%v", tc.min, tc.max), func(t *testing.T) {
			c, err := New(Options{Servers: []string{"a:1"}, HedgeMinDelay: tc.min, HedgeMaxDelay: tc.max})
			if tc.err {
				if err == nil {
					c.Close()
					t.Fatal("New accepted it")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.hedgeMin != tc.wantMin || c.hedgeMax != tc.wantMax || !c.hedge {
				t.Errorf("bounds %v..%v (hedge %v), want %v..%v", c.hedgeMin, c.hedgeMax, c.hedge, tc.wantMin, tc.wantMax)
			}
		})
	}
}
