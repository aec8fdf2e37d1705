// Package segmenttest is the conformance suite for segment.Store implementations.
// Every store package runs it against its real engine:
//
//	func TestConformance(t *testing.T) {
//		segmenttest.Run(t, func(t *testing.T) segment.Store { return openStore(t) })
//	}
//
// newStore must return a new store, with its own connection, on the same backend each
// time it is called, so that concurrent takers behave like separate processes. The
// suite creates fresh tags named after a random suffix, so it can run against a
// database that keeps data between runs.
package segmenttest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/conformance"
)

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) segment.Store) {
	t.Run("CreateAndList", func(t *testing.T) { testCreate(t, newStore) })
	t.Run("UnknownTag", func(t *testing.T) { testUnknown(t, newStore) })
	t.Run("TakeInOrder", func(t *testing.T) { testTakeInOrder(t, newStore) })
	t.Run("Floor", func(t *testing.T) { testFloor(t, newStore) })
	t.Run("RacingTakers", func(t *testing.T) { testRacing(t, newStore) })
	t.Run("ReturnThenClaim", func(t *testing.T) { testReturn(t, newStore) })
	t.Run("ReturnedAboveFloorOnly", func(t *testing.T) { testReturnFloor(t, newStore) })
	t.Run("RacingClaims", func(t *testing.T) { testRacingClaims(t, newStore) })
	t.Run("SetStep", func(t *testing.T) { testSetStep(t, newStore) })
	t.Run("Exhausted", func(t *testing.T) { testExhausted(t, newStore) })
	t.Run("BadArguments", func(t *testing.T) { testBadArgs(t, newStore) })
}

// TagName returns a fresh tag name for a test.
func TagName(t testing.TB) string { return "segtest-" + conformance.Suffix() }

func ctx(t *testing.T) context.Context { return conformance.Context(t, 60*time.Second) }

func open(t *testing.T, newStore func(t *testing.T) segment.Store) segment.Store {
	return conformance.Open(t, newStore)
}

func create(t *testing.T, s segment.Store, start, step int64) string {
	t.Helper()
	name := TagName(t)
	if err := s.Create(ctx(t), segment.Tag{Name: name, Max: start, Step: step, Description: "conformance " + t.Name()}); err != nil {
		t.Fatalf("Create(%s): %v", name, err)
	}
	return name
}

func take(t *testing.T, s segment.Store, tag string, n, floor int64) segment.Block {
	t.Helper()
	b, err := s.Take(ctx(t), tag, n, floor, 0)
	if err != nil {
		t.Fatalf("Take(%s, %d, floor %d): %v", tag, n, floor, err)
	}
	return b
}

func find(t *testing.T, s segment.Store, tag string) segment.Tag {
	t.Helper()
	tags, err := s.Tags(ctx(t))
	if err != nil {
		t.Fatalf("Tags: %v", err)
	}
	for _, x := range tags {
		if x.Name == tag {
			return x
		}
	}
	t.Fatalf("Tags does not list %s", tag)
	return segment.Tag{}
}

func testCreate(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 1000, 50)
	got := find(t, s, tag)
	if got.Max != 1000 || got.Step != 50 || got.Description != "conformance "+t.Name() || got.Returned != 0 {
		t.Fatalf("listed %+v, want Max 1000, Step 50, the description, Returned 0", got)
	}
	err := s.Create(ctx(t), segment.Tag{Name: tag, Step: 10})
	if !errors.Is(err, segment.ErrTagExists) {
		t.Fatalf("second Create: %v, want ErrTagExists", err)
	}
	if got := find(t, s, tag); got.Max != 1000 || got.Step != 50 {
		t.Fatalf("second Create changed the tag: %+v", got)
	}
	b := take(t, s, tag, 50, 0)
	if b.First != 1001 || b.Last != 1050 || b.Step != 50 || b.Returned {
		t.Fatalf("first Take after start 1000: %+v, want 1001..1050 step 50", b)
	}
	tags, err := s.Tags(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !sort.SliceIsSorted(tags, func(i, j int) bool { return tags[i].Name < tags[j].Name }) {
		t.Fatalf("Tags not sorted by name")
	}
}

func testUnknown(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := TagName(t)
	if _, err := s.Take(ctx(t), tag, 10, 0, 0); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Take of an unknown tag: %v, want ErrUnknownTag", err)
	}
	if err := s.SetStep(ctx(t), tag, 10); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("SetStep of an unknown tag: %v, want ErrUnknownTag", err)
	}
	if err := s.Return(ctx(t), tag, segment.Block{First: 1, Last: 5}); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Return to an unknown tag: %v, want ErrUnknownTag", err)
	}
}

func testTakeInOrder(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 10)
	want := int64(1)
	for _, n := range []int64{10, 1, 7, 1000, 3} {
		b := take(t, s, tag, n, 0)
		if b.First != want || b.Last != want+n-1 || b.Step != 10 || b.Returned {
			t.Fatalf("Take(%d): %+v, want %d..%d step 10", n, b, want, want+n-1)
		}
		want += n
	}
	if got := find(t, s, tag); got.Max != want-1 {
		t.Fatalf("Max %d after taking 1..%d", got.Max, want-1)
	}
}

func testFloor(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 10)
	if b := take(t, s, tag, 10, 0); b.First != 1 {
		t.Fatalf("first Take: %+v", b)
	}
	if b := take(t, s, tag, 10, 500); b.First != 501 || b.Last != 510 {
		t.Fatalf("Take with floor 500: %+v, want 501..510", b)
	}
	// A floor below Max changes nothing.
	if b := take(t, s, tag, 5, 3); b.First != 511 || b.Last != 515 {
		t.Fatalf("Take with floor 3 after 510: %+v, want 511..515", b)
	}
	if got := find(t, s, tag); got.Max != 515 {
		t.Fatalf("Max %d, want 515", got.Max)
	}
}

// check verifies that blocks do not overlap and returns how many values they hold.
func check(t *testing.T, blocks []segment.Block) int64 {
	t.Helper()
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].First < blocks[j].First })
	var total int64
	for i, b := range blocks {
		if b.Last < b.First {
			t.Fatalf("block %+v is empty", b)
		}
		if i > 0 && b.First <= blocks[i-1].Last {
			t.Fatalf("blocks overlap: %+v and %+v", blocks[i-1], b)
		}
		total += b.Len()
	}
	return total
}

func testRacing(t *testing.T, newStore func(t *testing.T) segment.Store) {
	setup := open(t, newStore)
	tag := create(t, setup, 0, 10)
	const racers, takes = 8, 40
	var (
		mu  sync.Mutex
		all []segment.Block
		wg  sync.WaitGroup
	)
	errs := make(chan error, racers)
	for r := 0; r < racers; r++ {
		s := open(t, newStore)
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			var last int64
			for i := 0; i < takes; i++ {
				n := int64(1 + (r*7+i*13)%50)
				b, err := s.Take(ctx(t), tag, n, last, 0)
				if err != nil {
					errs <- fmt.Errorf("racer %d take %d: %w", r, i, err)
					return
				}
				if b.Len() != n || b.First <= last {
					errs <- fmt.Errorf("racer %d: block %+v after %d, want %d values above it", r, b, last, n)
					return
				}
				last = b.Last
				mu.Lock()
				all = append(all, b)
				mu.Unlock()
			}
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := check(t, all)
	// Floors equal to a racer's own last value never skip: every value up to Max is
	// in some block.
	if got := find(t, setup, tag); got.Max != total {
		t.Fatalf("Max %d, but the blocks hold %d values", got.Max, total)
	}
}

func testReturn(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 100)
	take(t, s, tag, 100, 0)
	if err := s.Return(ctx(t), tag, segment.Block{First: 51, Last: 100}); err != nil {
		t.Fatalf("Return: %v", err)
	}
	if got := find(t, s, tag); got.Returned != 50 || got.Max != 100 {
		t.Fatalf("after returning 51..100: %+v, want Returned 50, Max 100", got)
	}
	b := take(t, s, tag, 100, 0)
	if b.First != 51 || b.Last != 100 || !b.Returned || b.Step != 100 {
		t.Fatalf("Take after the return: %+v, want the returned 51..100", b)
	}
	if b := take(t, s, tag, 100, 100); b.First != 101 || b.Last != 200 || b.Returned {
		t.Fatalf("Take after claiming: %+v, want fresh 101..200", b)
	}
	if got := find(t, s, tag); got.Returned != 0 {
		t.Fatalf("Returned %d after the claim, want 0", got.Returned)
	}
}

func testReturnFloor(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 10)
	take(t, s, tag, 300, 0)
	for _, b := range []segment.Block{{First: 201, Last: 250}, {First: 11, Last: 20}, {First: 101, Last: 150}} {
		if err := s.Return(ctx(t), tag, b); err != nil {
			t.Fatalf("Return %+v: %v", b, err)
		}
	}
	// Above floor 60 the lowest returned block is 101..150; 11..20 stays.
	if b := take(t, s, tag, 10, 60); b.First != 101 || b.Last != 150 || !b.Returned {
		t.Fatalf("Take with floor 60: %+v, want returned 101..150", b)
	}
	if b := take(t, s, tag, 10, 150); b.First != 201 || b.Last != 250 || !b.Returned {
		t.Fatalf("Take with floor 150: %+v, want returned 201..250", b)
	}
	if b := take(t, s, tag, 10, 250); b.First != 301 || b.Returned {
		t.Fatalf("Take with floor 250: %+v, want fresh from 301", b)
	}
	if b := take(t, s, tag, 10, 0); b.First != 11 || b.Last != 20 || !b.Returned {
		t.Fatalf("Take with floor 0: %+v, want the returned 11..20", b)
	}
}

func testRacingClaims(t *testing.T, newStore func(t *testing.T) segment.Store) {
	setup := open(t, newStore)
	tag := create(t, setup, 0, 10)
	take(t, setup, tag, 2000, 0)
	const returned = 20
	for i := int64(0); i < returned; i++ {
		b := segment.Block{First: i*100 + 1, Last: i*100 + 50}
		if err := setup.Return(ctx(t), tag, b); err != nil {
			t.Fatalf("Return %+v: %v", b, err)
		}
	}
	const racers = 6
	var (
		mu  sync.Mutex
		all []segment.Block
		wg  sync.WaitGroup
	)
	errs := make(chan error, racers)
	for r := 0; r < racers; r++ {
		s := open(t, newStore)
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for {
				b, err := s.Take(ctx(t), tag, 10, 0, 0)
				if err != nil {
					errs <- fmt.Errorf("racer %d: %w", r, err)
					return
				}
				mu.Lock()
				all = append(all, b)
				mu.Unlock()
				if !b.Returned {
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check(t, all)
	claimed := 0
	for _, b := range all {
		if b.Returned {
			claimed++
			if b.Len() != 50 {
				t.Fatalf("claimed %+v, want a whole returned block of 50", b)
			}
		}
	}
	if claimed != returned {
		t.Fatalf("%d returned blocks claimed, want each of the %d once", claimed, returned)
	}
}

func testSetStep(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 10)
	if err := s.SetStep(ctx(t), tag, 5000); err != nil {
		t.Fatalf("SetStep: %v", err)
	}
	if b := take(t, s, tag, 3, 0); b.Step != 5000 || b.Len() != 3 {
		t.Fatalf("Take after SetStep 5000: %+v, want 3 values with Step 5000", b)
	}
	if got := find(t, s, tag); got.Step != 5000 {
		t.Fatalf("listed step %d, want 5000", got.Step)
	}
	for _, bad := range []int64{0, -1, segment.MaxStep + 1} {
		if err := s.SetStep(ctx(t), tag, bad); err == nil {
			t.Fatalf("SetStep(%d) accepted", bad)
		}
	}
}

func testExhausted(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	const max = 1<<63 - 1
	tag := create(t, s, max-15, 10)
	if b := take(t, s, tag, 10, 0); b.First != max-14 || b.Last != max-5 {
		t.Fatalf("Take near the end: %+v", b)
	}
	if _, err := s.Take(ctx(t), tag, 10, 0, 0); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("Take past 2^63-1: %v, want ErrExhausted", err)
	}
	if b := take(t, s, tag, 5, 0); b.First != max-4 || b.Last != max {
		t.Fatalf("Take of the last 5: %+v", b)
	}
	if got := find(t, s, tag); got.Max != max {
		t.Fatalf("Max %d, want %d", got.Max, int64(max))
	}
	// A limit below 2^63-1, as an allocator with several residue classes passes.
	tag2 := create(t, s, 90, 10)
	if _, err := s.Take(ctx(t), tag2, 20, 0, 100); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("Take of 91..110 with limit 100: %v, want ErrExhausted", err)
	}
	if b, err := s.Take(ctx(t), tag2, 10, 0, 100); err != nil || b.First != 91 || b.Last != 100 {
		t.Fatalf("Take of 91..100 with limit 100: %+v, %v", b, err)
	}
	if _, err := s.Take(ctx(t), tag2, 1, 200, 0); err != nil {
		t.Fatalf("Take with a floor after the limit test: %v", err)
	}
}

// testBadArgs: a store refuses what package segmentstore's checks refuse, and a
// refused call changes nothing.
func testBadArgs(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := open(t, newStore)
	tag := create(t, s, 0, 10)
	for _, bad := range []segment.Tag{
		{Name: "", Step: 10},
		{Name: "has space", Step: 10},
		{Name: strings.Repeat("t", 129), Step: 10},
		{Name: TagName(t), Step: 0},
		{Name: TagName(t), Step: segment.MaxStep + 1},
		{Name: TagName(t), Step: 10, Max: -1},
		{Name: TagName(t), Step: 10, Description: strings.Repeat("d", 257)},
	} {
		if err := s.Create(ctx(t), bad); err == nil {
			t.Fatalf("Create(%+v) accepted", bad)
		}
	}
	for _, c := range []struct{ n, floor, limit int64 }{{0, 0, 0}, {-5, 0, 0}, {segment.MaxStep + 1, 0, 0}, {10, -1, 0}, {10, 0, -1}} {
		if _, err := s.Take(ctx(t), tag, c.n, c.floor, c.limit); err == nil {
			t.Fatalf("Take(n %d, floor %d, limit %d) accepted", c.n, c.floor, c.limit)
		}
	}
	if _, err := s.Take(ctx(t), "has space", 10, 0, 0); err == nil {
		t.Fatal("Take of a tag named \"has space\" accepted")
	}
	for _, b := range []segment.Block{{First: 10, Last: 5}, {First: 0, Last: 5}} {
		if err := s.Return(ctx(t), tag, b); err == nil {
			t.Fatalf("Return of %d..%d accepted", b.First, b.Last)
		}
	}
	if err := s.SetStep(ctx(t), "has space", 10); err == nil {
		t.Fatal("SetStep of a tag named \"has space\" accepted")
	}
	if got := find(t, s, tag); got.Max != 0 || got.Returned != 0 {
		t.Fatalf("bad calls changed the tag: %+v", got)
	}
}
