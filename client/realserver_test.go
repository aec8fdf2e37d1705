package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	flurryserver "github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
)

// startRealServer runs the real server (package server) in process with its
// embedded "default" snowflake namespace (file lease in a temporary directory),
// over HTTP/1.1 and h2c.
func startRealServer(tb testing.TB) string { return startRealServerLease(tb, "") }

// startRealServerLease is startRealServer with the namespace's node value leased
// from leaseStore (empty: the server's own directory), so that servers sharing one
// store issue distinct IDs.
func startRealServerLease(tb testing.TB, leaseStore string) string {
	tb.Helper()
	cfg := &config.Config{
		DataDir:    tb.TempDir(),
		Namespaces: map[string]*config.Namespace{"default": {Strategy: "snowflake", Snowflake: &config.Snowflake{Lease: config.Lease{Store: leaseStore}}}},
		Order:      []string{"default"},
	}
	if err := cfg.Check(nil); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	srv, err := flurryserver.New(ctx, flurryserver.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = &p
	ts.Start()
	tb.Cleanup(func() {
		ts.Close()
		srv.Close(ctx)
	})
	return ts.URL
}

func TestRealServer(t *testing.T) {
	url := startRealServer(t)
	for _, tr := range []Transport{HTTP, GRPC} {
		c, err := New(Options{Servers: []string{url}, Transport: tr, Batch: 300})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		seen := map[int64]bool{}
		prev := int64(-1)
		for range 1000 {
			id, err := c.Next(context.Background(), "default")
			if err != nil {
				t.Fatal(err)
			}
			if seen[int64(id)] || int64(id) <= prev {
				t.Fatalf("%v: ID %d after %d", tr, id, prev)
			}
			seen[int64(id)], prev = true, int64(id)
		}
		if _, err := c.Next(context.Background(), "nope"); !errors.Is(err, ErrUnknownNamespace) {
			t.Errorf("%v: unknown namespace: %v", tr, err)
		}
		if _, err := c.Next(context.Background(), "default"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Fetch(context.Background(), "default", 100_001); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v: count above max_count: %v", tr, err)
		}
		d, err := c.Decode(context.Background(), "default", fmt.Sprint(prev))
		if err != nil || d.ID != fmt.Sprint(prev) || d.Namespace != "default" || d.Strategy != "snowflake" ||
			len(d.Fields) != 1 || d.Fields[0].Name != "worker" || time.Since(d.Time) > time.Minute || time.Since(d.Time) < -time.Minute {
			t.Errorf("%v: Decode: %+v %v", tr, d, err)
		}
		info, err := c.Info(context.Background(), "")
		if err != nil || len(info.Namespaces) != 1 || time.Since(info.Started) > time.Minute {
			t.Fatalf("%v: Info: %+v %v", tr, info, err)
		}
		ns := info.Namespaces[0]
		if ns.Name != "default" || ns.Strategy != "snowflake" || !ns.Ready || ns.Issued < 1000 || ns.Layout == nil || ns.Lease == nil || ns.Segment != nil ||
			ns.Layout.Text != config.DefaultLayout || ns.Layout.Lifetime.Year() != 2094 || ns.Layout.LifeLeft < 60*365*24*time.Hour ||
			ns.Lease.State != "held" || ns.Lease.Mark.Before(time.Now().Add(-time.Minute)) {
			t.Errorf("%v: Info namespace: %+v layout %+v lease %+v", tr, ns, ns.Layout, ns.Lease)
		}
	}
}

// BenchmarkNextRealServer is BenchmarkNext against the real server's handler, in
// this process, or the server at FLURRY_BENCH_SERVER (a URL such as
// http://127.0.0.1:8080, serving a "default" namespace) when that is set, so the
// server can run in another process. batch=0,low=0 is the default Options.
func BenchmarkNextRealServer(b *testing.B) {
	url := os.Getenv("FLURRY_BENCH_SERVER")
	if url == "" {
		url = startRealServer(b)
	}
	for _, bl := range [][2]int{{0, 0}, {1000, 0}, {10_000, 0}, {100_000, 0}, {100_000, 300_000}} {
		batch, low := bl[0], bl[1]
		for _, tr := range []Transport{HTTP, GRPC} {
			name := fmt.Sprintf("%s/batch=%d", tr, batch)
			if batch == 0 {
				name = fmt.Sprintf("%s/default", tr)
			}
			if low != 0 {
				name += fmt.Sprintf(",low=%d", low)
			}
			b.Run(name, func(b *testing.B) {
				c, err := New(Options{Servers: []string{url}, Transport: tr, Batch: batch, LowWater: low})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				ns := c.Namespace("default")
				ctx := context.Background()
				if _, err := ns.Next(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					id, err := ns.Next(ctx)
					if err != nil {
						b.Fatal(err)
					}
					sink = id
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IDs/s")
			})
		}
	}
}
