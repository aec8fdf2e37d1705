package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

// Every value lands in a bucket whose upper bound is at or above it and within
// 1/16 of it, so the percentiles are never low and at most about 6% high.
func TestBucketBounds(t *testing.T) {
	for _, ns := range []int64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 999_999, 1_000_000, 123_456_789, 60e9, 1 << 40} {
		i := bucketOf(ns)
		up := upper(i)
		if up < ns {
			t.Errorf("%d ns: bucket %d ends at %d, below it", ns, i, up)
		}
		if ns >= 16 && float64(up-ns) > float64(ns)/16 {
			t.Errorf("%d ns: bucket %d ends at %d, more than 1/16 above it", ns, i, up)
		}
		if i > 0 && upper(i-1) >= ns {
			t.Errorf("%d ns: the bucket below, %d, already ends at %d", ns, i-1, upper(i-1))
		}
	}
}

func TestQuantile(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.quantile(tc.q)
		if got < tc.want || float64(got-tc.want) > float64(tc.want)/16 {
			t.Errorf("quantile(%v) = %v, want %v to 1/16 above it", tc.q, got, tc.want)
		}
	}
	if got := h.quantile(1); got != time.Second {
		t.Errorf("quantile(1) = %v, want the maximum, 1s", got)
	}
}

// A session over the counting store makes the calls of the protocol, and each is
// counted in the phase current when it returns.
func TestCountingStoreCountsASession(t *testing.T) {
	ctx := context.Background()
	first := newPhase(time.Now(), time.Minute)
	cs := newCountingStore(memstore.New(clock.NewSystem()), first)
	g, s, err := lease.NewGenerator(ctx, snowflake.Options{}, lease.Options{Store: cs, Scope: "count", Window: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := first.kinds[kAcquire].lat.n.Load(); n != 1 {
		t.Errorf("acquire calls = %d, want 1", n)
	}
	if n := first.kinds[kList].lat.n.Load(); n != 1 {
		t.Errorf("list calls = %d, want 1 (order scope)", n)
	}
	if n := first.kinds[kRenew].lat.n.Load(); n < 1 {
		t.Errorf("renew calls = %d, want the acquisition's reservation at least", n)
	}
	second := newPhase(time.Now(), time.Minute)
	cs.next(second)
	deadline := time.Now().Add(10 * time.Second)
	for second.kinds[kRenew].lat.n.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := second.kinds[kRenew].lat.n.Load(); n < 2 {
		t.Errorf("renew calls in the second phase = %d, want the background renewals", n)
	}
	third := newPhase(time.Now(), time.Minute)
	cs.next(third)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if n := third.kinds[kRelease].lat.n.Load(); n != 1 {
		t.Errorf("release calls = %d, want 1", n)
	}
	if third.writes() < 1 {
		t.Errorf("writes = %d, want the release", third.writes())
	}
	// A release of a lease that is gone is counted as an error and as a loss.
	err = cs.Release(ctx, lease.Lease{Scope: "count", Value: 0, Token: "stale"}, 1)
	if !errors.Is(err, lease.ErrLost) {
		t.Fatalf("stale release: %v, want ErrLost", err)
	}
	if third.kinds[kRelease].errs.Load() != 1 || third.kinds[kRelease].lost.Load() != 1 {
		t.Errorf("release errors %d, lost %d; want 1 and 1", third.kinds[kRelease].errs.Load(), third.kinds[kRelease].lost.Load())
	}
	if len(third.errorTexts()) != 1 {
		t.Errorf("error texts = %v, want the stale release's", third.errorTexts())
	}
}

// Processes given one -run-id share the run's scope: their sessions lease values
// of one pool without taking each other's, and a last run without -keep deletes
// what every part left.
func TestPartsShareARun(t *testing.T) {
	dir := t.TempDir()
	store := "file://" + dir
	common := []string{"-store", store, "-scope-mode", "shared", "-sessions", "6", "-duration", "1s", "-run-id", "shared1", "-keep", "-hold", "500ms"}
	outs := make([]bytes.Buffer, 2)
	errs := make([]bytes.Buffer, 2)
	codes := make([]int, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() {
			codes[p] = run(context.Background(), append(slices.Clone(common), "-part", strconv.Itoa(p)), &outs[p], &errs[p])
		})
	}
	wg.Wait()
	for p := range 2 {
		if codes[p] != 0 {
			t.Fatalf("part %d: exit %d\n%s%s", p, codes[p], outs[p].String(), errs[p].String())
		}
		if !strings.Contains(outs[p].String(), "held=6/6") || !strings.Contains(outs[p].String(), "errors=0") {
			t.Errorf("part %d: want 6 of 6 sessions held and no errors; got\n%s", p, outs[p].String())
		}
		if !strings.Contains(outs[p].String(), "part "+strconv.Itoa(p)+" of a run shared") {
			t.Errorf("part %d: the report does not say which part it is:\n%s", p, outs[p].String())
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the parts kept nothing in the store (-keep): %v, %d entries", err, len(entries))
	}
	var out, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-store", store, "-scope-mode", "shared", "-sessions", "1", "-duration", "1s", "-run-id", "shared1", "-part", "2"}, &out, &stderr); code != 0 {
		t.Fatalf("cleanup run: exit %d\n%s%s", code, out.String(), stderr.String())
	}
	if !strings.Contains(out.String(), "cleanup: deleted") {
		t.Errorf("the last run did not delete the run's marks:\n%s", out.String())
	}
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-run-id", "a/b"}, "-run-id"},
		{[]string{"-run-id", strings.Repeat("a", 33)}, "-run-id"},
		{[]string{"-part", "1"}, "-part needs -run-id"},
		{[]string{"-run-id", "x", "-part", "1000"}, "-part 1000"},
		{[]string{"-hold", "11m"}, "-hold"},
	} {
		_, err := parseFlags(append([]string{"-store", "file:///tmp/x"}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
	if _, err := parseFlags([]string{"-store", "file:///tmp/x", "-run-id", "Ab09", "-part", "3", "-hold", "1m"}, io.Discard); err != nil {
		t.Errorf("a valid shared run refused: %v", err)
	}
}
