package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"

	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
)

// Example runs the server of `flurry serve` with no configuration (a snowflake
// namespace "default" with a file lease, and a segment namespace "segment" in
// SQLite, both in a temporary directory) and talks to it with a client.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flurry-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := config.Default()
	cfg.DataDir = dir
	if err := cfg.Check(nil); err != nil {
		panic(err)
	}
	srv, err := server.New(ctx, server.Options{Config: cfg, OpenSegmentStore: segmenturl.Open,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer srv.Close(ctx)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	c, err := client.New(client.Options{Servers: []string{hs.URL}, Batch: 100})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for range 3 {
		id, err := c.Next(ctx, "segment") // a fresh tag counts from 1
		if err != nil {
			panic(err)
		}
		fmt.Println(id)
	}
	id, err := c.Next(ctx, "default") // a snowflake ID: time, worker, sequence
	if err != nil {
		panic(err)
	}
	d, err := c.Decode(ctx, "default", id.String())
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Strategy, d.Fields[0].Name, !d.Time.IsZero())

	info, err := c.Info(ctx, "")
	if err != nil {
		panic(err)
	}
	for _, ns := range info.Namespaces {
		fmt.Println(ns.Name, ns.Strategy, ns.Ready)
	}
	fmt.Println(info.Namespaces[0].Layout.Text)
	// Output:
	// 1
	// 2
	// 3
	// snowflake worker true
	// default snowflake true
	// segment segment true
	// time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16
}
