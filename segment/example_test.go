package segment_test

import (
	"context"
	"fmt"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/memstore"
)

// An allocator serves a tag's IDs from ranges it takes from a store; on Close it
// hands the unused rest back, and the next allocator of the tag claims it first, so
// a graceful restart loses no ID. memstore keeps the counters in memory; the SQL,
// Redis and etcd stores (segmenturl.Open) keep them durably.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.Create(ctx, segment.Tag{Name: "orders", Step: 1000}); err != nil {
		panic(err)
	}
	a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st}, Tag: "orders"})
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, _ := a.Next(ctx)
		fmt.Println(id)
	}
	ids := make([]flurry.ID, 4)
	n, _ := a.NextN(ctx, ids)
	fmt.Println(ids[:n])
	fmt.Println(a.Stats().CurrentFirst, a.Stats().CurrentLast)
	if err := a.Close(ctx); err != nil {
		panic(err)
	}

	b, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st}, Tag: "orders"})
	if err != nil {
		panic(err)
	}
	defer b.Close(ctx)
	id, _ := b.Next(ctx)
	fmt.Println("after a restart:", id)
	// Output:
	// 1
	// 2
	// 3
	// [4 5 6 7]
	// 1 1000
	// after a restart: 8
}

// With several stores, store k of N hands out only the IDs that are k mod N
// (Flickr's two ticket servers), so the stores never talk to each other.
func Example_residueClasses() {
	ctx := context.Background()
	var stores []segment.Store
	for range 2 {
		st := memstore.New()
		if err := st.Create(ctx, segment.Tag{Name: "orders", Step: 100}); err != nil {
			panic(err)
		}
		stores = append(stores, st)
	}
	a, err := segment.New(ctx, segment.Options{Stores: stores, Tag: "orders"})
	if err != nil {
		panic(err)
	}
	defer a.Close(ctx)
	ids := make([]flurry.ID, 5)
	if _, err := a.NextN(ctx, ids); err != nil {
		panic(err)
	}
	// The allocator starts at a random store: its IDs are all even or all odd.
	k := a.Stats().Store
	same := true
	for _, id := range ids {
		same = same && int(id)%2 == k
	}
	fmt.Println(ids[4]-ids[0], same)
	// Output: 8 true
}
