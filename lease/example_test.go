package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/snowflake"
)

// A generator whose worker field is leased from a pool, over the embedded file store:
// acquire a value, issue an ID, close.
func Example() {
	dir, err := os.MkdirTemp("", "flurry-lease-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := filestore.New(dir)
	if err != nil {
		panic(err)
	}
	defer st.Close()

	// A clock that stands still makes the output stable; leave Clock nil for the
	// system clock. (The session renews only when this clock is moved.)
	clk := clock.NewManual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	l, _ := layout.Lookup("twitter")
	ctx := context.Background()
	g, s, err := lease.NewGenerator(ctx,
		snowflake.Options{Layout: l, Clock: clk, Namespace: "example"},
		lease.Options{Store: st, Scope: "orders", Node: layout.NodeValues{1}, Leased: []string{"worker"},
			Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	status := s.Status()
	fmt.Println("scope:", status.Scope)
	fmt.Println("node:", status.NodeText)
	fmt.Println("reserved through:", status.Mark.Format(time.RFC3339))

	id, err := g.Next(ctx)
	if err != nil {
		panic(err)
	}
	d, _ := l.Decode(id)
	fmt.Println("ID:", id, d.Nodes)

	// Close stops the generator, ends the session and releases the value with the
	// mark of what was issued, not the whole reservation.
	if err := s.Close(); err != nil {
		panic(err)
	}
	<-s.Done()
	fmt.Println("session:", s.Err())
	if _, err := g.Next(ctx); errors.Is(err, lease.ErrLost) {
		fmt.Println("generator: stopped")
	}
	recs, err := st.List(ctx, status.Scope)
	if err != nil {
		panic(err)
	}
	fmt.Println("store:", recs[0].Value, "held", recs[0].Held, "mark", time.UnixMilli(recs[0].Mark).UTC().Format(time.RFC3339))
	// Output:
	// scope: orders/datacenter=1
	// node: datacenter=1,worker=0
	// reserved through: 2026-11-22T12:00:04Z
	// ID: 2124472963691577344 [{datacenter 1} {worker 0}]
	// session: lease: session closed
	// generator: stopped
	// store: 0 held false mark 2026-11-22T12:00:00Z
}
