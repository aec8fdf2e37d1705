// Package storetest holds tests the segment stores run beyond the conformance
// suite (segmenttest): many concurrent takers, takes under an outage, a benchmark.
package storetest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
)

// Create makes a fresh tag starting at start in s and returns its name.
func Create(t testing.TB, s segment.Store, start, step int64) string {
	t.Helper()
	tag := segmenttest.TagName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Create(ctx, segment.Tag{Name: tag, Max: start, Step: step}); err != nil {
		t.Fatalf("Create(%s): %v", tag, err)
	}
	return tag
}

// Concurrent runs takers goroutines, each with a store of its own from newStore,
// each taking takes small blocks (1 to 5 values) of one fresh tag, some of them
// handing back a part that the others then claim; it checks that no two blocks
// overlap and that every value up to the tag's Max was handed out once.
func Concurrent(t *testing.T, newStore func(t *testing.T) segment.Store, takers, takes int) {
	setup := newStore(t)
	defer setup.Close()
	tag := Create(t, setup, 0, 10)
	var (
		mu   sync.Mutex
		used []segment.Block // blocks handed out and not returned
		wg   sync.WaitGroup
	)
	errs := make(chan error, takers)
	for r := range takers {
		s := newStore(t)
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var floor int64
			for i := range takes {
				n := int64(1 + (r+i)%5)
				b, err := s.Take(ctx, tag, n, floor, 0)
				if err != nil {
					errs <- fmt.Errorf("taker %d, take %d: %w", r, i, err)
					return
				}
				if b.First <= floor || !b.Returned && b.Len() != n {
					errs <- fmt.Errorf("taker %d: %+v for %d values above %d", r, b, n, floor)
					return
				}
				floor = b.Last
				if i%10 == 9 && b.Len() > 1 {
					// Hand back the tail: another taker claims it.
					tail := segment.Block{First: b.First + 1, Last: b.Last}
					if err := s.Return(ctx, tag, tail); err != nil {
						errs <- fmt.Errorf("taker %d: return %+v: %w", r, tail, err)
						return
					}
					b.Last = b.First
				}
				mu.Lock()
				used = append(used, b)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].First < used[j].First })
	var total int64
	for i, b := range used {
		if i > 0 && b.First <= used[i-1].Last {
			t.Fatalf("blocks overlap: %+v and %+v", used[i-1], b)
		}
		total += b.Len()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tags, err := setup.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tags {
		if x.Name == tag {
			if total+x.Returned != x.Max {
				t.Fatalf("Max %d, but %d values were handed out and %d wait returned", x.Max, total, x.Returned)
			}
			t.Logf("%d takers, %d blocks, %d values, %d returned", takers, len(used), total, x.Returned)
			return
		}
	}
	t.Fatalf("Tags does not list %s", tag)
}

// TakeWithin takes n values under a deadline d and fails the test when the call
// took much longer than d.
func TakeWithin(t *testing.T, s segment.Store, tag string, n int64, d time.Duration) (segment.Block, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	b, err := s.Take(ctx, tag, n, 0, 0)
	if took := time.Since(start); took > d+time.Second {
		t.Errorf("Take took %v with a %v deadline", took, d)
	}
	return b, err
}

// BenchmarkTake measures one Take of 1000 fresh values per op on one tag.
func BenchmarkTake(b *testing.B, s segment.Store) {
	tag := Create(b, s, 0, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Take(ctx, tag, 1000, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// Find returns tag as s.Tags lists it, and fails the test when it is not listed.
func Find(t testing.TB, s segment.Store, tag string) segment.Tag {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tags, err := s.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tags {
		if x.Name == tag {
			return x
		}
	}
	t.Fatalf("Tags does not list %s", tag)
	return segment.Tag{}
}

// ReturnGuards checks that s refuses to take back a block above the tag's Max or
// one that overlaps a block returned before: handing those out could issue a value
// twice.
func ReturnGuards(t *testing.T, s segment.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tag := Create(t, s, 0, 10)
	if _, err := s.Take(ctx, tag, 100, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, tag, segment.Block{First: 20, Last: 30}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []segment.Block{{First: 95, Last: 101}, {First: 30, Last: 40}, {First: 10, Last: 20}, {First: 21, Last: 29}, {First: 20, Last: 30}, {First: 1, Last: 100}} {
		if err := s.Return(ctx, tag, b); err == nil {
			t.Errorf("Return of %d..%d accepted", b.First, b.Last)
		}
	}
	for _, b := range []segment.Block{{First: 31, Last: 40}, {First: 10, Last: 19}} {
		if err := s.Return(ctx, tag, b); err != nil {
			t.Errorf("Return of %d..%d: %v", b.First, b.Last, err)
		}
	}
	if x := Find(t, s, tag); x.Returned != 31 {
		t.Errorf("Returned %d, want 31", x.Returned)
	}
}
