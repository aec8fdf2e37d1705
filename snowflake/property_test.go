package snowflake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
)

// call is one Next as the property test saw it: the ID and the logical instants at
// which the call started and returned, from one shared counter.
type call struct {
	id         flurry.ID
	start, end int64
	worker     int
}

// jolt moves a fake clock like a bad NTP daemon and an operator together: mostly
// nothing, sometimes small steps forward or back, rarely a jump of seconds back or
// forward. Workers call it between their calls, so clock moves interleave with
// generator calls however the goroutines are scheduled.
func jolt(f *clock.Fake, rng *rand.Rand, big bool) {
	switch r := rng.IntN(10000); {
	case r < 200:
		f.Add(time.Duration(rng.IntN(4000)) * time.Microsecond)
	case r < 300:
		f.Add(-time.Duration(rng.IntN(2000)) * time.Microsecond)
	case r < 320:
		f.Add(-time.Duration(rng.IntN(20000)) * time.Microsecond)
	case big && r < 322:
		f.Add(-time.Duration(1000+rng.IntN(2000)) * time.Millisecond)
	case big && r < 324:
		f.Add(time.Duration(1000+rng.IntN(2000)) * time.Millisecond)
	}
}

// checkCalls asserts no duplicate, every ID decodes to an owned node value, and
// linearizability: a call that started after another returned got a larger ID. With
// lanes, only each worker's own IDs must increase.
func checkCalls(t *testing.T, l *layout.Layout, calls []call, owned map[layout.NodeValues]bool, linearizable bool) {
	t.Helper()
	ids := make([]flurry.ID, len(calls))
	for i, c := range calls {
		ids[i] = c.id
		p, err := l.Decompose(c.id)
		if err != nil {
			t.Fatalf("ID %d does not decode: %v", c.id, err)
		}
		if !owned[p.Nodes] {
			t.Fatalf("ID %d carries node %v, not one of the generator's", c.id, p.Nodes)
		}
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("duplicate ID %d among %d", ids[i], len(ids))
		}
	}
	byWorker := map[int][]call{}
	for _, c := range calls {
		byWorker[c.worker] = append(byWorker[c.worker], c)
	}
	for w, cs := range byWorker {
		sort.Slice(cs, func(i, j int) bool { return cs[i].start < cs[j].start })
		for i := 1; i < len(cs); i++ {
			if cs[i].id <= cs[i-1].id {
				// A worker's calls never overlap, so its IDs must increase in every mode
				// except across a node switch, which the callers of this check rule out.
				t.Fatalf("worker %d: ID %d after %d", w, cs[i].id, cs[i-1].id)
			}
		}
	}
	if !linearizable {
		return
	}
	byEnd := slices.Clone(calls)
	sort.Slice(byEnd, func(i, j int) bool { return byEnd[i].end < byEnd[j].end })
	sort.Slice(calls, func(i, j int) bool { return calls[i].start < calls[j].start })
	var maxDone flurry.ID = -1
	j := 0
	for _, c := range calls {
		for j < len(byEnd) && byEnd[j].end < c.start {
			maxDone = max(maxDone, byEnd[j].id)
			j++
		}
		if c.id <= maxDone {
			t.Fatalf("not linearizable: a call started after an ID %d was returned and got %d", maxDone, c.id)
		}
	}
}

func TestPropertyChaosClock(t *testing.T) {
	perWorker := 40000
	if raceEnabled || testing.Short() {
		perWorker = 8000
	}
	l := lay(t, "gameserver") // 6-bit sequence: overflow in almost every tick
	for _, tc := range []struct {
		name string
		o    Options
		big  bool
	}{
		{"wait-fail", Options{}, true},
		{"wait-fail-nowait", Options{WaitThreshold: -1}, false},
		{"borrow-fail", Options{Overflow: Borrow, MaxDrift: 20 * time.Millisecond}, true},
		{"wait-logical", Options{Behind: Logical, MaxDrift: 50 * time.Millisecond}, true},
		{"borrow-logical-random", Options{Overflow: Borrow, Behind: Logical, MaxDrift: 30 * time.Millisecond, Start: StartRandom, RandomBelow: 10}, true},
		{"wait-fail-continue", Options{Start: StartContinue}, true},
		{"lanes-4", Options{Lanes: 4, Overflow: Borrow, MaxDrift: 10 * time.Millisecond}, true},
	} {
		for _, c := range variants {
			t.Run(tc.name+"/"+c.String(), func(t *testing.T) {
				f := clock.NewFake(t0)
				f.LimitSleep(time.Millisecond) // sleepers wake early; a step back is not undone by a sleep
				o := tc.o
				o.Layout, o.Clock, o.Node = l, f, layout.NodeValues{3, 1000, 7}
				g := newGenVariant(t, o, c)
				workers := 8
				var counter atomic.Int64
				results := make([][]call, workers)
				var behind atomic.Int64
				var wg sync.WaitGroup
				for w := 0; w < workers; w++ {
					wg.Add(1)
					lane := g.Lane()
					go func() {
						defer wg.Done()
						out := make([]call, 0, perWorker)
						rng := rand.New(rand.NewPCG(uint64(w), uint64(len(tc.name))))
						for len(out) < perWorker {
							jolt(f, rng, tc.big)
							start := counter.Add(1)
							var id flurry.ID
							var err error
							if o.Lanes > 1 {
								id, err = lane.Next(bg)
							} else {
								id, err = g.Next(bg)
							}
							end := counter.Add(1)
							if errors.Is(err, ErrClockBehind) {
								behind.Add(1)
								f.Add(time.Millisecond) // let time pass, as it would
								continue
							}
							if err != nil {
								t.Errorf("Next: %v", err)
								return
							}
							out = append(out, call{id: id, start: start, end: end, worker: w})
						}
						results[w] = out
					}()
				}
				wg.Wait()
				var all []call
				for _, r := range results {
					all = append(all, r...)
				}
				if len(all) != workers*perWorker {
					t.Fatalf("%d calls recorded", len(all))
				}
				checkCalls(t, l, all, map[layout.NodeValues]bool{o.Node: true}, o.Lanes <= 1)
				if d := g.Stats().MaxDriftSeen; d > o.MaxDrift {
					t.Errorf("IDs ran %v ahead of the clock; the bound is %v", d, o.MaxDrift)
				}
				t.Logf("%d IDs, %d ClockBehind errors, stats %+v", len(all), behind.Load(), g.Stats())
			})
		}
	}
}

// Switching node values keeps IDs unique, though the generator's IDs step back in
// time at each switch.
func TestPropertySwitchNodeUnique(t *testing.T) {
	for _, c := range variants {
		t.Run(c.String(), func(t *testing.T) { testSwitchNodeUnique(t, c) })
	}
}

func testSwitchNodeUnique(t *testing.T, c contention) {
	l := lay(t, "gameserver")
	f := clock.NewFake(t0)
	f.LimitSleep(time.Millisecond)
	primary := layout.NodeValues{1, 1, 0}
	standby := []layout.NodeValues{{1, 1, 1}, {1, 1, 2}, {1, 1, 3}}
	g := newGenVariant(t, Options{Layout: l, Clock: f, Node: primary, Behind: SwitchNode, Standby: standby}, c)
	owned := map[layout.NodeValues]bool{primary: true}
	for _, s := range standby {
		owned[s] = true
	}
	var mu sync.Mutex
	seen := map[flurry.ID]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(7, uint64(w)))
			for i := 0; i < 5000; i++ {
				jolt(f, rng, true)
				id, err := g.Next(bg)
				if errors.Is(err, ErrClockBehind) {
					f.Add(time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				p, _ := l.Decompose(id)
				mu.Lock()
				if seen[id] || !owned[p.Nodes] {
					t.Errorf("duplicate or foreign ID %d (node %v)", id, p.Nodes)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d IDs, stats %+v", len(seen), g.Stats())
}

// Several OS processes, each with its own node value, generating at full speed:
// the union of their output has no duplicate and each process's IDs increase.
func TestMultiProcess(t *testing.T) {
	if os.Getenv("FLURRY_TEST_CHILD") != "" {
		t.Skip("child process")
	}
	n := 200000
	if testing.Short() {
		n = 20000
	}
	procs := 4
	outs := make([][]byte, procs)
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.v=false")
			cmd.Env = append(os.Environ(), "FLURRY_TEST_CHILD="+strconv.Itoa(p), "FLURRY_TEST_CHILD_N="+strconv.Itoa(n))
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", p, err)
			}
			outs[p] = out
		}()
	}
	wg.Wait()
	seen := make(map[int64]bool, procs*n)
	for p, out := range outs {
		sc := bufio.NewScanner(bytes.NewReader(out))
		var last int64 = -1
		count := 0
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] < '0' || line[0] > '9' {
				continue // test framework chatter
			}
			v, err := strconv.ParseInt(line, 10, 64)
			if err != nil {
				t.Fatalf("child %d printed %q", p, line)
			}
			if v <= last {
				t.Fatalf("child %d: %d after %d", p, v, last)
			}
			if seen[v] {
				t.Fatalf("duplicate %d across processes", v)
			}
			seen[v] = true
			last = v
			count++
		}
		if count != n {
			t.Errorf("child %d printed %d IDs, want %d", p, count, n)
		}
	}
}

func TestChildProcess(t *testing.T) {
	who := os.Getenv("FLURRY_TEST_CHILD")
	if who == "" {
		t.Skip("helper process of another test: runs only when TestMultiProcess starts it")
	}
	w, _ := strconv.Atoi(who)
	n, _ := strconv.Atoi(os.Getenv("FLURRY_TEST_CHILD_N"))
	g, err := New(Options{Node: layout.NodeValues{1, int64(w)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bw := bufio.NewWriterSize(os.Stdout, 1<<16)
	buf := make([]flurry.ID, 1024)
	var line []byte
	for done := 0; done < n; {
		k, err := g.NextN(bg, buf[:min(len(buf), n-done)])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, id := range buf[:k] {
			line, _ = id.AppendText(line[:0])
			line = append(line, '\n')
			bw.Write(line)
		}
		done += k
	}
	bw.Flush()
}
