package client

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry"
)

// TestTuneSizesFromDrainRate drives the adaptive sizing with chosen times: no
// clock is read, so it does not depend on the machine's speed.
func TestTuneSizesFromDrainRate(t *testing.T) {
	c := &Client{batch: DefaultBatch, low: DefaultBatch / 2, maxBatch: maxBatch, autoBatch: true, autoLow: true}
	b := newBuffer(c, &Namespace{name: "x"}, takeInts)
	t0 := time.Unix(1000, 0)
	b.tune(t0)
	if b.size != DefaultBatch || b.low != DefaultBatch/2 {
		t.Fatalf("before any use: size %d low %d, want %d and %d", b.size, b.low, DefaultBatch, DefaultBatch/2)
	}
	// 10 million IDs a second, 1 ms round trips: a request of 5 ms of use
	// (50,000), and a low-water mark of three round trips (30,000).
	b.measured(time.Millisecond)
	b.got = 10_000
	b.tune(t0.Add(time.Millisecond))
	if b.size != 50_000 || b.low != 30_000 {
		t.Errorf("at 10M/s, 1 ms round trips: size %d low %d, want 50000 and 30000", b.size, b.low)
	}
	// Far faster: the size stops at maxBatch, the mark at four requests.
	b.got += 100_000_000
	b.tune(t0.Add(2 * time.Millisecond))
	if b.size != maxBatch || b.low != 4*maxBatch {
		t.Errorf("at 50G/s: size %d low %d, want %d and %d", b.size, b.low, maxBatch, 4*maxBatch)
	}
	// Idle for a minute: back to the defaults.
	for i := range 10 {
		b.tune(t0.Add(time.Duration(i+1) * time.Minute))
	}
	if b.size != DefaultBatch || b.low != DefaultBatch/2 {
		t.Errorf("after idling: size %d low %d, want %d and %d", b.size, b.low, DefaultBatch, DefaultBatch/2)
	}

	// With Batch and LowWater set, nothing moves.
	c2 := &Client{batch: 300, low: 100, maxBatch: maxBatch}
	b2 := newBuffer(c2, &Namespace{name: "y"}, takeInts)
	b2.tune(t0)
	b2.measured(time.Millisecond)
	b2.got = 1_000_000
	b2.tune(t0.Add(time.Millisecond))
	if b2.size != 300 || b2.low != 100 {
		t.Errorf("fixed options: size %d low %d, want 300 and 100", b2.size, b2.low)
	}
}

// TestAdaptiveRefillsKeepOrder takes IDs as fast as it can at the default options:
// whatever sizes the refills take, the IDs strictly increase, never more than one
// request of a namespace is in flight, and no request asks for more than maxBatch.
func TestAdaptiveRefillsKeepOrder(t *testing.T) {
	for _, tr := range []Transport{HTTP, GRPC} {
		t.Run(tr.String(), func(t *testing.T) {
			s := newTestServer(t)
			c := newTestClient(t, Options{Transport: tr}, s)
			ns := c.Namespace("default")
			ctx := context.Background()
			prev := flurry.ID(-1)
			const n = 300_000
			for i := range n {
				id, err := ns.Next(ctx)
				if err != nil {
					t.Fatalf("Next %d: %v", i, err)
				}
				if id <= prev {
					t.Fatalf("Next %d: %d after %d; one server's IDs must increase", i, id, prev)
				}
				prev = id
			}
			if m := s.svc.maxIn.Load(); m != 1 {
				t.Errorf("%d requests of one namespace in flight at once, want 1", m)
			}
			if m := s.svc.maxAsked.Load(); m > maxBatch || m < DefaultBatch {
				t.Errorf("largest request %d, want %d to %d", m, DefaultBatch, maxBatch)
			}
			// Every request brought at least DefaultBatch IDs, and at most the
			// buffer's bound of four maximal requests is left over.
			if calls := s.svc.calls.Load(); calls > n/DefaultBatch+1 {
				t.Errorf("%d requests for %d IDs, want at most %d", calls, n, n/DefaultBatch+1)
			}
			t.Logf("%d requests, largest %d", s.svc.calls.Load(), s.svc.maxAsked.Load())
		})
	}
}

// TestAdaptiveBatchBelowServerMaxCount: a grown request that the server refuses as
// above its max_count is asked again, smaller, without the caller seeing an error.
func TestAdaptiveBatchBelowServerMaxCount(t *testing.T) {
	s := newTestServer(t)
	s.svc.maxCount = 5000
	c := newTestClient(t, Options{}, s)
	ns := c.Namespace("default")
	b := ns.ints
	b.mu.Lock()
	b.rate = 1e12 // as if used at a terabit: the first request asks for maxBatch
	b.mu.Unlock()
	prev := flurry.ID(-1)
	for i := range 20_000 {
		id, err := ns.Next(context.Background())
		if err != nil {
			t.Fatalf("Next %d: %v", i, err)
		}
		if id <= prev {
			t.Fatalf("Next %d: %d after %d", i, id, prev)
		}
		prev = id
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.maxSize > 5000 || b.maxSize < DefaultBatch {
		t.Errorf("largest request after refusals %d, want %d to 5000", b.maxSize, DefaultBatch)
	}
	if m := s.svc.maxAsked.Load(); m != maxBatch {
		t.Errorf("first request asked for %d, want %d", m, maxBatch)
	}
}
