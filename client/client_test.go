package client

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
)

func TestNextIncreasingFromOneServer(t *testing.T) {
	for _, tr := range []Transport{HTTP, GRPC} {
		t.Run(tr.String(), func(t *testing.T) {
			s := newTestServer(t)
			// LowWater fixed: the adaptive mark is three round trips of drain (up
			// to four batches), so on a loaded machine, where a round trip is
			// slow beside a caller taking IDs in a loop, it fetches further ahead.
			c := newTestClient(t, Options{Transport: tr, Batch: 100, LowWater: 50}, s)
			ctx := context.Background()
			prev := flurry.ID(-1)
			for i := range 1050 {
				id, err := c.Next(ctx, "default")
				if err != nil {
					t.Fatalf("Next %d: %v", i, err)
				}
				if id <= prev {
					t.Fatalf("Next %d: %d after %d; one server's IDs must increase", i, id, prev)
				}
				prev = id
			}
			// 1050 IDs in batches of 100, prefetching below 50: 11 requests, and
			// at most one more in flight.
			if n := s.svc.calls.Load(); n < 11 || n > 12 {
				t.Errorf("%d requests for 1050 IDs in batches of 100, want 11 or 12", n)
			}
		})
	}
}

func TestConcurrentCallersNoDuplicate(t *testing.T) {
	s := newTestServer(t)
	c := newTestClient(t, Options{Batch: 500}, s)
	const workers, each = 8, 5000
	got := make([][]flurry.ID, workers)
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
	wg.Wait()
	seen := make(map[flurry.ID]bool, workers*each)
	for _, ids := range got {
		prev := flurry.ID(-1)
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %d handed out twice", id)
			}
			seen[id] = true
			if id <= prev {
				t.Fatalf("one caller got %d after %d from one server", id, prev)
			}
			prev = id
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d IDs, want %d", len(seen), workers*each)
	}
}

func TestNextText(t *testing.T) {
	s := newTestServer(t)
	c := newTestClient(t, Options{Batch: 10}, s)
	seen := map[string]bool{}
	for range 25 {
		id, err := c.NextText(context.Background(), "text")
		if err != nil {
			t.Fatal(err)
		}
		if !hexID(id) || seen[id] {
			t.Fatalf("text ID %q: malformed or repeated", id)
		}
		seen[id] = true
	}
	_, err := c.Next(context.Background(), "text")
	if !errors.Is(err, ErrWrongKind) {
		t.Errorf("Next on a text namespace: %v, want ErrWrongKind", err)
	}
	_, err = c.NextText(context.Background(), "default")
	if !errors.Is(err, ErrWrongKind) {
		t.Errorf("NextText on an integer namespace: %v, want ErrWrongKind", err)
	}
}

func TestRefusalsAreNotFailedOver(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		namespace string
		want      error
	}{
		{"unknown namespace", Options{Token: "secret"}, "nope", ErrUnknownNamespace},
		{"wrong token", Options{Token: "wrong"}, "default", ErrUnauthenticated},
		{"no token", Options{Tokens: map[string]string{"other": "secret"}}, "default", ErrUnauthenticated},
		{"batch above max_count", Options{Token: "secret", Batch: 100_001}, "default", ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newTestServer(t), newTestServer(t)
			a.svc.token, b.svc.token = "secret", "secret"
			c := newTestClient(t, tc.opts, a, b)
			_, err := c.Next(context.Background(), tc.namespace)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Next: %v, want %v", err, tc.want)
			}
			if _, ok := errors.AsType[*RefusedError](err); !ok {
				t.Errorf("Next: %T, want *RefusedError", err)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("a refusal matches ErrUnavailable: %v", err)
			}
			// Only a hedge (the first server slow to refuse) may have reached
			// the second server; a refusal is not failed over.
			if n, h := b.svc.calls.Load(), c.Stats()[1].Hedges; n > h {
				t.Errorf("second server called %d times after a refusal, %d of them hedges; it must not be failed over to", n, h)
			}
			if st := c.Stats(); !st[0].DownUntil.IsZero() {
				t.Errorf("a refusing server was marked down: %+v", st[0])
			}
		})
	}
	t.Run("right token", func(t *testing.T) {
		a := newTestServer(t)
		a.svc.token = "secret"
		c := newTestClient(t, Options{Token: "wrong", Tokens: map[string]string{"default": "secret"}}, a)
		if _, err := c.Next(context.Background(), "default"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestFailoverOnUnavailableAndDown(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	// Without hedging: on a loaded machine the first server's answer can take longer
	// than the hedge delay, and a server out-hedged once is passed over like one that
	// failed, before the test makes it fail (hedging: TestHedgeAroundHungServer).
	c := newTestClient(t, Options{Batch: 50, Backoff: time.Hour, NoHedge: true}, a, b)
	ctx := context.Background()
	seen := map[flurry.ID]bool{}
	take := func(n int) {
		t.Helper()
		for range n {
			id, err := c.Next(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("ID %d twice", id)
			}
			seen[id] = true
		}
	}
	take(100)
	if b.svc.calls.Load() != 0 {
		t.Fatal("second server used while the first answers")
	}
	a.svc.mode.Store(modeUnavailable)
	take(200)
	if b.svc.calls.Load() == 0 {
		t.Fatal("no failover to the second server")
	}
	st := c.Stats()
	if st[0].Failures == 0 || st[0].DownUntil.IsZero() || st[0].LastError == nil {
		t.Errorf("first server not marked down: %+v", st[0])
	}
	// The first server is in backoff for up to an hour: not asked again.
	calls := a.svc.calls.Load()
	a.svc.mode.Store(modeOK)
	take(200)
	if a.svc.calls.Load() != calls {
		t.Error("a server in backoff was asked while another answers")
	}
	// When every other server fails, one in backoff is still tried. More IDs
	// than the buffer holds at most (a low-water mark of four batches, and one
	// more), so that a refill must have come after the kill.
	b.kill()
	take(500)
	if a.svc.calls.Load() == calls {
		t.Error("the server in backoff was not tried when the other was down")
	}
}

func TestFailoverOnTimeout(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	a.svc.mode.Store(modeHang)
	// Without hedging, which would ask the second server before Timeout
	// (TestHedgeAroundHungServer).
	c := newTestClient(t, Options{Batch: 10, Timeout: 50 * time.Millisecond, NoHedge: true}, a, b)
	if _, err := c.Next(context.Background(), "default"); err != nil {
		t.Fatalf("Next with a hanging first server: %v", err)
	}
	st := c.Stats()
	if st[0].Failures != 1 || st[1].Requests == 0 {
		t.Errorf("stats %+v, want one timeout on the first server, then the second", st)
	}
	b.kill()
	c2 := newTestClient(t, Options{Batch: 10, Timeout: 50 * time.Millisecond}, a)
	_, err := c2.Next(context.Background(), "default")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "Options.Timeout") {
		t.Errorf("Next with every server hanging: %v, want ErrUnavailable naming Options.Timeout", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a server's timeout matches context.DeadlineExceeded, which callers read as their own deadline: %v", err)
	}
}

func TestEveryServerDown(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	a.svc.mode.Store(modeUnavailable)
	b.kill()
	c := newTestClient(t, Options{Batch: 10}, a, b)
	_, err := c.Next(context.Background(), "default")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Next: %v, want ErrUnavailable", err)
	}
	e, ok := errors.AsType[*Error](err)
	if !ok || len(e.Attempts) != 2 || e.Namespace != "default" {
		t.Fatalf("Next: %#v, want an *Error with two attempts", err)
	}
	if e.Attempts[0].Server != a.URL || e.Attempts[1].Server != b.URL {
		t.Errorf("attempts %+v, want %s then %s", e.Attempts, a.URL, b.URL)
	}
	// Once a server is back, the next call succeeds although both are in backoff.
	a.svc.mode.Store(modeOK)
	if _, err := c.Next(context.Background(), "default"); err != nil {
		t.Fatalf("Next after recovery: %v", err)
	}
}

func TestContextBoundsTheWait(t *testing.T) {
	a := newTestServer(t)
	a.svc.mode.Store(modeHang)
	c := newTestClient(t, Options{Batch: 10, Timeout: time.Hour}, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Next(ctx, "default")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next: %v, want DeadlineExceeded", err)
	}
	// The refill goes on in the background; Close ends it and returns.
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end a hanging refill")
	}
}

func TestClose(t *testing.T) {
	a := newTestServer(t)
	c := newTestClient(t, Options{Batch: 100}, a)
	ctx := context.Background()
	if _, err := c.Next(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if c.Namespace("default").Buffered() == 0 {
		t.Fatal("nothing buffered after the first Next")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Next(ctx, "default"); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
	if _, err := c.Next(ctx, "new"); !errors.Is(err, ErrClosed) {
		t.Errorf("Next of a new namespace after Close: %v, want ErrClosed", err)
	}
	if _, _, err := c.Fetch(ctx, "default", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Fetch after Close: %v, want ErrClosed", err)
	}
	if n := c.Namespace("default").Buffered(); n != 0 {
		t.Errorf("%d IDs still buffered after Close", n)
	}
}

func TestCloseWakesWaiters(t *testing.T) {
	a := newTestServer(t)
	a.svc.mode.Store(modeHang)
	c := newTestClient(t, Options{Timeout: time.Hour}, a)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Next(context.Background(), "default")
		errc <- err
	}()
	for a.svc.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("waiting Next after Close: %v, want ErrClosed", err)
	}
}

func TestFetch(t *testing.T) {
	a := newTestServer(t)
	c := newTestClient(t, Options{}, a)
	ids, text, err := c.Fetch(context.Background(), "default", 7)
	if err != nil || len(ids) != 7 || text != nil {
		t.Fatalf("Fetch: %v %v %v", ids, text, err)
	}
	ids, text, err = c.Fetch(context.Background(), "text", 3)
	if err != nil || len(text) != 3 || ids != nil {
		t.Fatalf("Fetch text: %v %v %v", ids, text, err)
	}
	if _, _, err := c.Fetch(context.Background(), "default", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Fetch 0: %v, want ErrInvalidArgument", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"no server", Options{}},
		{"bad scheme", Options{Servers: []string{"ftp://x"}}},
		{"duplicate", Options{Servers: []string{"http://a:1", "a:1/"}}},
		{"negative batch", Options{Servers: []string{"a:1"}, Batch: -1}},
		{"negative timeout", Options{Servers: []string{"a:1"}, Timeout: -1}},
		{"backoff above max", Options{Servers: []string{"a:1"}, Backoff: time.Minute, MaxBackoff: time.Second}},
		{"transport", Options{Servers: []string{"a:1"}, Transport: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := New(tc.opts); err == nil {
				c.Close()
				t.Fatal("New accepted it")
			}
		})
	}
}

func TestBufferedNextDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	a := newTestServer(t)
	c := newTestClient(t, Options{Batch: 100_000, LowWater: -1}, a)
	ctx := context.Background()
	if _, err := c.Next(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	var err error
	if n := testing.AllocsPerRun(10_000, func() { sink, err = c.Next(ctx, "default") }); n != 0 {
		t.Errorf("Client.Next: %v allocs, want 0", n)
	}
	ns := c.Namespace("default")
	if n := testing.AllocsPerRun(10_000, func() { sink, err = ns.Next(ctx) }); n != 0 {
		t.Errorf("Namespace.Next: %v allocs, want 0", n)
	}
	if err != nil {
		t.Fatal(err)
	}
}

var sink flurry.ID
