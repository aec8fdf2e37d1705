package redisgen

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// TestRestoreNode: a Redis that lost its keys (here: both deleted, as a restart
// without persistence leaves them) stops a Generator with ErrNodeUnset unless
// RestoreNode is on; with it, the Generator writes its node value back and
// issues again, never at or below a tick it issued before, even when Redis TIME
// stands behind that tick (simulated by this Generator's last tick being ahead
// of Redis's clock, which is what a promoted replica with a slow clock shows),
// and never over a node value someone else set meanwhile.
func TestRestoreNode(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	for _, text := range []string{"twitter", "time:45:1ms:2024-01-01T00:00:00Z,worker:5,seq:12"} {
		t.Run(text, func(t *testing.T) {
			l := mustLayout(t, text)
			ns := freshNamespace(t, c)
			nv := layout.NodeValues{3, 4}
			if len(l.NodeFields()) == 1 {
				nv = layout.NodeValues{3}
			}
			off := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
			var logs syncBuffer
			g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, RestoreNode: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := g.SetNode(ctx, nv); err != nil {
				t.Fatal(err)
			}
			var last flurry.ID
			for range 100 {
				id, err := g.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				last = max(last, id)
			}
			if _, err := off.Next(ctx); err != nil {
				t.Fatal(err)
			}
			wipe := func() {
				if err := c.Del(ctx, nodeKey(ns), lastKey(ns)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			wipe()
			if _, err := off.Next(ctx); !errors.Is(err, ErrNodeUnset) {
				t.Fatalf("without RestoreNode, Next after the keys were lost: %v; want ErrNodeUnset", err)
			}
			id, err := g.Next(ctx)
			if err != nil {
				t.Fatalf("with RestoreNode, Next after the keys were lost: %v", err)
			}
			if id <= last {
				t.Fatalf("after the restore %d, not above %d issued before", id, last)
			}
			if got, err := g.Node(ctx); err != nil || got != nv {
				t.Fatalf("node after the restore: %v, %v; want %v", got, err, nv)
			}
			if !strings.Contains(logs.String(), "node key was gone") {
				t.Errorf("no warning of the restore; log: %s", logs.String())
			}

			// Redis TIME behind what this Generator issued: the restored floor
			// holds the namespace above it.
			ahead := redisTick(t, c, l) + 300
			g.lastTick.Store(ahead)
			wipe()
			_, err = g.Next(ctx)
			if !errors.Is(err, ErrClockBehind) {
				t.Fatalf("restored below the last tick this Generator issued: Next = %v; want ErrClockBehind until Redis TIME passes tick %d", err, ahead)
			}
			for {
				id, err := g.Next(ctx)
				if errors.Is(err, ErrClockBehind) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				p, err := l.Decompose(id)
				if err != nil {
					t.Fatal(err)
				}
				if p.Tick <= ahead {
					t.Fatalf("restored namespace issued in tick %d, at or below %d issued before the loss", p.Tick, ahead)
				}
				break
			}

			// Someone set another value after the loss: it stays.
			wipe()
			other := nv
			other[0]++
			if err := off.SetNode(ctx, other); err != nil {
				t.Fatal(err)
			}
			// The restore that raced with it: the key exists when it runs.
			if _, err := g.restoreNode(ctx, ErrNodeUnset); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Next(ctx); err != nil {
				t.Fatal(err)
			}
			if got, err := g.Node(ctx); err != nil || got != other {
				t.Fatalf("restore over a value set meanwhile: node %v, %v; want %v", got, err, other)
			}
		})
	}
}
