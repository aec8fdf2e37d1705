package layout_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flurryid/flurry/layout"
)

func ExampleParse() {
	l, err := layout.Parse("time:41:1ms:2025-01-01T00:00:00Z,datacenter:5,worker:5,seq:12")
	if err != nil {
		panic(err)
	}
	fmt.Println(l)
	fmt.Println("ends", l.Lifetime().Format(time.DateOnly))
	fmt.Println(l.Nodes(), "node values,", l.Rate(), "IDs/s per node")
	// Output:
	// time:41:1ms:2025-01-01T00:00:00Z,datacenter:5,worker:5,seq:12
	// ends 2094-09-07
	// 1024 node values, 4.096e+06 IDs/s per node
}

func ExampleLayout_Compose() {
	l, _ := layout.Lookup("twitter")
	at := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	nodes, _ := l.ParseNodeValues("datacenter=1,worker=3")
	id, err := l.Compose(layout.Parts{Tick: l.TickOf(at), Nodes: nodes, Sequence: 7})
	if err != nil {
		panic(err)
	}
	fmt.Println(id)
	p, _ := l.Decompose(id)
	fmt.Println(l.TickTime(p.Tick), l.FormatNodeValues(p.Nodes), p.Sequence)
	// Output:
	// 1796874333189189639
	// 2024-06-01 12:00:00 +0000 UTC datacenter=1,worker=3 7
}

func ExampleLayout_Decode() {
	l, _ := layout.Lookup("discord")
	d, err := l.Decode(175928847299117063)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(d)
	fmt.Println(string(b))
	// Output: {"id":"175928847299117063","time":"2016-04-30T11:18:25.796Z","worker":1,"process":0,"seq":7}
}

func ExampleLayout_Bounds() {
	l, _ := layout.Lookup("twitter")
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	// Every ID any node issued on that day, for WHERE id BETWEEN lo AND hi.
	lo, hi, _ := l.Bounds(day, day.Add(24*time.Hour-time.Millisecond))
	fmt.Println(lo, hi)
	fmt.Println(l.TimeOf(lo), l.TimeOf(hi))
	// Output:
	// 1796693139256246272 1797055527121846271
	// 2024-06-01 00:00:00 +0000 UTC 2024-06-01 23:59:59.999 +0000 UTC
}

func ExampleLayout_CheckNodeValues() {
	l, _ := layout.Lookup("twitter")
	fmt.Println(l.CheckNodeValues(layout.NodeValues{1, 40}))
	// Output: layout: invalid: worker 40 does not fit in 5 bits (0..31)
}

func ExamplePlan() {
	p, err := layout.Plan(layout.Requirements{
		Years: 50, Rate: 100_000,
		Nodes: []layout.NodeNeed{{Name: "region", Count: 6}, {Name: "machine", Count: 200}},
		Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Layout)
	for _, r := range p.Reasoning {
		fmt.Println(r)
	}
	// Output:
	// time:42:1ms:2025-01-01T00:00:00Z,region:3,machine:8,seq:10
	// time: 41 bits of 1ms hold 2199023255552 ticks, 69.7 years (1.58e+12 ticks needed for 50 years)
	// region: 3 bits hold 8 values (6 needed)
	// machine: 8 bits hold 256 values (200 needed)
	// seq: 7 bits hold 128 IDs per 1ms tick, 128000 IDs/s per node (100 per tick needed for 100000/s)
	// spare: 1 bit to time, for a lifetime of at least twice the 50 years asked (until 2164-05-15)
	// spare: 3 bits to seq, for 1024000 IDs/s per node, 10.2x the peak asked: room for bursts and growth
}
