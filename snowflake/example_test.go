package snowflake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
)

func ExampleGenerator_Next() {
	l, _ := layout.Parse("twitter")
	// A fixed clock makes the output stable; leave Clock nil for the system clock.
	f := clock.NewFake(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	g, err := snowflake.New(snowflake.Options{Layout: l, Node: layout.NodeValues{1, 3}, Clock: f})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	id, _ := g.Next(context.Background())
	d, _ := l.Decode(id)
	fmt.Println(id)
	fmt.Println(d.Time.Format(time.RFC3339), d.Nodes, d.Sequence)
	// Output:
	// 2124472963691589632
	// 2026-11-22T12:00:00Z [{datacenter 1} {worker 3}] 0
}

func Example_clockBehind() {
	f := clock.NewFake(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	g, _ := snowflake.New(snowflake.Options{Clock: f, Namespace: "example"})
	defer g.Close()
	g.Next(context.Background())
	f.Add(-2 * time.Second) // the wall clock steps back, beyond the 10 ms wait threshold
	_, err := g.Next(context.Background())
	var cb *snowflake.ClockBehindError
	if errors.As(err, &cb) {
		fmt.Println("refused; clock behind by", cb.Gap)
	}
	f.Add(2 * time.Second)
	_, err = g.Next(context.Background())
	fmt.Println("after catching up:", err)
	// Output:
	// refused; clock behind by 2s
	// after catching up: <nil>
}
