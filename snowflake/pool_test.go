package snowflake

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
)

func waitLevel(t *testing.T, p *Pool, level int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Level() < level {
		if time.Now().After(deadline) {
			t.Fatalf("pool level %d, want %d", p.Level(), level)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoolFillsAndDrainsInOrder(t *testing.T) {
	g := newGen(t, Options{Layout: lay(t, "gameserver")})
	p, err := NewPool(g, PoolOptions{Size: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitLevel(t, p, 1024)
	var last flurry.ID
	for i := 0; i < 5000; i++ { // past the pool: refills and direct takes mix in
		id, err := p.Next(bg)
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			t.Fatalf("take %d: %d after %d", i, id, last)
		}
		last = id
	}
	s := p.Stats()
	if s.Size != 1024 || s.LastRefillError != nil {
		t.Errorf("stats %+v", s)
	}
	p.Close()
	if _, err := p.Next(bg); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
}

// Many takers on a small pool: the refiller races with direct takes all the time.
// IDs stay unique and linearizable.
func TestPoolConcurrentLinearizable(t *testing.T) {
	l := lay(t, "gameserver")
	g := newGen(t, Options{Layout: l, Node: layout.NodeValues{1, 2, 3}})
	p, err := NewPool(g, PoolOptions{Size: 64, LowWater: 32, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	per := 20000
	if raceEnabled {
		per = 4000
	}
	var counter sync.Mutex
	var seq int64
	tick := func() int64 { counter.Lock(); defer counter.Unlock(); seq++; return seq }
	results := make([][]call, 4)
	var wg sync.WaitGroup
	for w := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				s := tick()
				id, err := p.Next(bg)
				e := tick()
				if err != nil {
					t.Error(err)
					return
				}
				results[w] = append(results[w], call{id: id, start: s, end: e, worker: w})
			}
		}()
	}
	wg.Wait()
	var all []call
	for _, r := range results {
		all = append(all, r...)
	}
	checkCalls(t, l, all, map[layout.NodeValues]bool{{1, 2, 3}: true}, true)
	t.Logf("pool stats %+v", p.Stats())
}

func TestPoolOptionsAndRefillErrors(t *testing.T) {
	g := newGen(t, Options{})
	for _, o := range []PoolOptions{{Size: 1000}, {Size: 1}, {LowWater: 9000}, {Batch: -1}} {
		if _, err := NewPool(g, o); err == nil {
			t.Errorf("NewPool(%+v) accepted", o)
		}
	}
	// A generator that refuses (clock behind): the refiller records it and takers get
	// the generator's error, never a made-up ID.
	f := clock.NewFake(t0)
	g2 := newGen(t, Options{Clock: f, Namespace: "refuse", WaitThreshold: -1})
	next(t, g2)
	f.Add(-time.Hour)
	p, err := NewPool(g2, PoolOptions{Size: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Next(bg); !errors.Is(err, ErrClockBehind) {
		t.Errorf("take from a refusing generator: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().LastRefillError == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(p.Stats().LastRefillError, ErrClockBehind) {
		t.Errorf("refill error %v", p.Stats().LastRefillError)
	}
}

func TestPoolZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	g := newGen(t, Options{})
	p, _ := NewPool(g, PoolOptions{})
	defer p.Close()
	waitLevel(t, p, 8192)
	if n := testing.AllocsPerRun(4000, func() { p.Next(bg) }); n != 0 {
		t.Errorf("Pool.Next allocates %v per call", n)
	}
}

// After a burst that leaves the pool between LowWater and full, it fills up again.
func TestPoolTopsUpAfterBurst(t *testing.T) {
	g := newGen(t, Options{})
	p, err := NewPool(g, PoolOptions{Size: 8192})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitLevel(t, p, 8192)
	for i := 0; i < 4000; i++ { // stays above LowWater (4096): no wake-up
		if _, err := p.Next(bg); err != nil {
			t.Fatal(err)
		}
	}
	waitLevel(t, p, 8192)
}
