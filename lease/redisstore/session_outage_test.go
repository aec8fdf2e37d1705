//go:build unix

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/testenv"
)

// Stop Redis under a running lease-backed generator: it keeps issuing inside its
// reserved window and lease, stops with ErrLost before the lease could expire,
// and issues again, strictly above what it issued before, when Redis returns.
func TestSessionSurvivesRedisOutage(t *testing.T) {
	port := testenv.FreePort(t)
	srv := testenv.StartRedis(t, port)
	st, err := openURL(context.Background(), fmt.Sprintf("redis://127.0.0.1:%d/0", port), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ := layout.Parse("twitter")
	ttl := 2 * time.Second
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Namespace: t.Name()},
		lease.Options{Store: st, Scope: "outage", TTL: ttl, Window: 500 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	ctx := context.Background()
	var last flurry.ID
	issue := func() error {
		id, err := g.Next(ctx)
		if err == nil {
			if id <= last {
				t.Fatalf("ID %d after %d", id, last)
			}
			last = id
		}
		return err
	}
	// At least one renewal before the outage: renewals come every TTL/3, and 30 s
	// bounds the wait on a stalled machine.
	for end := time.Now().Add(30 * time.Second); s.Status().Renewals == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no renewal in 30 s before the outage")
		}
	}

	testenv.Pause(t, srv) // Redis stops answering
	stopped := time.Now()
	issuedDuring := 0
	var fenced, lastIssued time.Time
	for time.Since(stopped) < 30*time.Second {
		err := issue()
		if errors.Is(err, lease.ErrLost) {
			fenced = time.Now()
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lastIssued = time.Now() // the ID was issued before this reading
		issuedDuring++
		time.Sleep(time.Millisecond)
	}
	if fenced.IsZero() {
		t.Fatalf("the generator kept issuing for 30 s with Redis stopped and a %v TTL", ttl)
	}
	// By Redis's clock, the last renewal that succeeded: none can while Redis is
	// stopped, so the expiry read now is the one Redis holds.
	expires := s.Status().Expires
	if !lastIssued.IsZero() && !lastIssued.Before(expires) {
		t.Errorf("issued at %v, not before the lease's expiry in Redis %v", lastIssued, expires)
	}
	if issuedDuring == 0 {
		t.Error("issued nothing inside the reserved window after Redis stopped")
	}
	t.Logf("issued %d IDs during the outage, fenced %v after it began (TTL %v)", issuedDuring, fenced.Sub(stopped), ttl)

	srv.Process.Signal(syscall.SIGCONT) // Redis returns
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := issue()
		if err == nil {
			break
		}
		if !errors.Is(err, lease.ErrLost) && !errors.Is(err, snowflake.ErrClockBehind) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery 30 s after Redis returned: %+v", s.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 1000; i++ {
		if err := issue(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recovered; status %+v", s.Status())
}
