package redisgen_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/redisgen"
)

// A fleet of Redis servers, each with its own node value, issues IDs that never
// collide; this example talks to one of them. (It needs a Redis, so it is compiled
// but not run.)
func Example() {
	ctx := context.Background()
	l, _ := layout.Parse("twitter")
	g, err := redisgen.New(ctx, redisgen.Options{
		URL:       "redis://127.0.0.1:6379/0",
		Namespace: "orders",
		Layout:    l,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	// Once per Redis server (flurry redis set-node does the same).
	if err := g.SetNode(ctx, layout.NodeValues{1, 3}); err != nil { // datacenter 1, worker 3
		log.Fatal(err)
	}

	id, err := g.Next(ctx)
	if cb, ok := errors.AsType[*redisgen.ClockBehindError](err); ok {
		log.Fatalf("Redis's clock is behind by %v; retry later", cb.Gap)
	}
	if err != nil {
		log.Fatal(err)
	}
	p, _ := l.Decompose(id)
	fmt.Println(id, p.Nodes[0], p.Nodes[1])

	// Thousands of IDs in one round trip.
	batch := make([]flurry.ID, 4096)
	n, err := g.NextN(ctx, batch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "IDs")
}
