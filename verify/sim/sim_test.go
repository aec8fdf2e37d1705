package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
)

var seedFlag = flag.Uint64("simseed", 0, "seed for TestLeaseSimRandomSeed (0: a random one, printed)")

// scale shrinks runs under the race detector, which slows the simulation about tenfold.
func scale(nodes int, d time.Duration) (int, time.Duration) {
	if raceEnabled {
		return max(nodes/3, 20), d / 2
	}
	return nodes, d
}

// oneAtATime runs the test with GOMAXPROCS 1: the simulation runs one goroutine at a
// time, and hands the baton over fastest on one processor.
func oneAtATime(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

func runLease(t *testing.T, cfg LeaseConfig) *Report {
	t.Helper()
	w, err := NewLeaseWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := w.Run()
	t.Log(r.Summary())
	return r
}

func replay(cfg LeaseConfig) string {
	return fmt.Sprintf("go run ./verify/sim/cmd/simrun -seed %d -seeds 1 -nodes %d -hours %g", cfg.Seed, cfg.Nodes, cfg.Duration.Hours())
}

func clean(t *testing.T, cfg LeaseConfig) {
	t.Helper()
	r := runLease(t, cfg)
	for _, v := range r.Violations {
		t.Error(v)
	}
	if r.Failed() {
		t.Errorf("violations %v; replay with: %s", r.ByKind, replay(cfg))
	}
	if r.IDs == 0 || r.Kills == 0 || r.Pauses == 0 || r.Holders <= int64(cfg.Nodes) {
		t.Errorf("the run exercised too little: %s", r.Summary())
	}
}

// The real protocol on fixed seeds: no violation of any invariant.
func TestLeaseSimFixedSeeds(t *testing.T) {
	oneAtATime(t)
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			cfg := DefaultLeaseConfig()
			cfg.Seed = seed
			cfg.Nodes, cfg.Duration = scale(150, 20*time.Minute)
			clean(t, cfg)
		})
	}
}

// The real protocol on a random seed, printed with the command that replays it.
func TestLeaseSimRandomSeed(t *testing.T) {
	oneAtATime(t)
	cfg := DefaultLeaseConfig()
	cfg.Seed = *seedFlag
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64() >> 1
	}
	cfg.Nodes, cfg.Duration = scale(150, 20*time.Minute)
	t.Logf("seed %d; replay: %s (or go test ./verify/sim -run TestLeaseSimRandomSeed -simseed %d)", cfg.Seed, replay(cfg), cfg.Seed)
	clean(t, cfg)
}

// One seed is one history: two runs of a seed have the same trace hash, and another
// seed another.
func TestLeaseSimDeterministic(t *testing.T) {
	oneAtATime(t)
	cfg := DefaultLeaseConfig()
	cfg.Nodes, cfg.Duration = 60, 5*time.Minute
	cfg.Seed = 7
	a, b := runLease(t, cfg), runLease(t, cfg)
	cfg.Seed = 8
	c := runLease(t, cfg)
	if a.TraceHash != b.TraceHash || a.IDs != b.IDs || a.Events != b.Events {
		t.Errorf("seed 7 twice: trace %016x and %016x, %d and %d IDs", a.TraceHash, b.TraceHash, a.IDs, b.IDs)
	}
	if a.TraceHash == c.TraceHash {
		t.Errorf("seeds 7 and 8 have the same trace %016x", a.TraceHash)
	}
}

// Each known-bad variant of the protocol, run in the real session code, is caught.
//
// The race detector slows the simulation about tenfold and a variant may need several
// seeds, so this test runs without it: make test-norace (scripts/norace-tests.sh,
// run by .ci/run) runs it beside the race-enabled set.
func TestLeaseSimCatchesFlaws(t *testing.T) {
	if raceEnabled {
		t.Skip("the known-bad variants run without the race detector: make test-norace")
	}
	oneAtATime(t)
	for _, tc := range []struct {
		name string
		flaw Flaw
		ttl  time.Duration
		win  time.Duration
		want string // the violation expected
	}{
		// The grant's end counts from the reply: a reply slower than the margin makes
		// the generator issue after the store let the lease expire. It shows where the
		// grant, not the reservation, ends first: when a node issues above a mark
		// ahead of its clock (Logical, after a clock step back), its reservation
		// reaches past the fence.
		{"fence-from-reply", FenceFromReply, 3 * time.Second, 5 * time.Second, "live"},
		// A grant before the reservation: IDs in ticks the store has not reserved.
		{"grant-before-reserve", GrantBeforeReserve, 10 * time.Second, 2 * time.Second, "reserved"},
		// A new holder starting in the tick of the mark instead of after it. It shows
		// when the value's own mark is what the holder starts above: with
		// OrderValue always, with OrderScope only when it is the scope's highest.
		{"above-without-plus-one", AboveWithoutPlusOne, 10 * time.Second, 2 * time.Second, "above"},
		// The generator issues through a new journal mark before the journal has
		// it: a crash during a stalled write leaves the restart a mark below IDs the
		// crashed run issued, and the resumed lease issues them again.
		{"grant-before-journal", GrantBeforeJournal, 0, 0, "order-holder"},
		// A second process resumes a lease from the journal of a process that is
		// still running (the journal's lock would refuse it): the journal is its
		// own file, so it trusts the mark and starts below what the first, running
		// on until its next renewal fails, issues.
		{"shared-journal", 0, 0, 0, "above"},
		// The generator bounded by the journal alone goes on past the store's
		// reservation through an outage longer than the budget.
		{"past-budget", PastBudget, 0, 0, "reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Seeds in turn until one catches it (a variant shows only when its fault
			// comes at the right moment: the first seed or two at full size, a few
			// more for the race detector's smaller runs).
			tries := 4
			var seen map[string]int64
			for i := 0; i < tries; i++ {
				cfg := DefaultLeaseConfig()
				cfg.Seed = uint64(2 + i)
				cfg.Nodes, cfg.Duration = scale(200, 15*time.Minute)
				cfg.TTL, cfg.Window, cfg.Flaws = tc.ttl, tc.win, tc.flaw
				cfg.SharedJournal = tc.name == "shared-journal"
				if tc.ttl == 0 {
					// A short budget, so that outages and crashes outlast it often,
					// crashes often, and stalling disks.
					cfg.Budget = 5 * time.Second
					cfg.Faults.KillPerHour, cfg.Faults.DiskStallProb = 20, 0.2
				}
				if tc.flaw == AboveWithoutPlusOne {
					cfg.Order = lease.OrderValue
				}
				cfg.Faults.SlowPerHour = 60
				if tc.flaw == FenceFromReply || tc.flaw == GrantBeforeJournal {
					// Clock steps back, each often followed by a restart: a
					// restart's clock behind the IDs it must continue above.
					cfg.Faults.StepPerHour = 30
				}
				r := runLease(t, cfg)
				if r.ByKind[tc.want] > 0 {
					t.Logf("caught: %v; first: %v", r.ByKind, r.Violations[0])
					return
				}
				seen = r.ByKind
			}
			t.Errorf("the %s variant ran without a %q violation: %v", tc.name, tc.want, seen)
		})
	}
}

// Through store outages shorter than the budget, with nothing else going wrong,
// no node is ever fenced: the outage budget's promise, on the real session code.
// The same run with outages longer than the budget is fenced, so the check is
// not blind.
func TestLeaseSimOutagesWithinBudget(t *testing.T) {
	oneAtATime(t)
	for _, long := range []bool{false, true} {
		t.Run(map[bool]string{false: "within", true: "beyond"}[long], func(t *testing.T) {
			cfg := DefaultLeaseConfig()
			cfg.Seed = 5
			// Not scaled down under the race detector: the run is cheap, and it
			// needs its outages.
			cfg.Nodes, cfg.Duration = 20, 30*time.Minute
			cfg.Faults = Faults{OutagePerHour: 40, MaxOutage: 50 * time.Second}
			if long {
				// Outages of 10 s and more, past a 10 s budget.
				cfg.Faults.MaxOutage, cfg.Budget = 0, 10*time.Second
			}
			r := runLease(t, cfg)
			for _, v := range r.Violations {
				t.Error(v)
			}
			switch {
			case r.Outages < 5:
				t.Fatalf("too few outages to judge: %s", r.Summary())
			case !long && r.Acct.Fenced != 0:
				t.Errorf("fenced for %v of node time through outages of at most 50 s, inside a %v budget: %s",
					time.Duration(r.Acct.Fenced), r.Config.Budget, r.Summary())
			case long && r.Acct.Fenced == 0:
				t.Errorf("never fenced through outages past the %v budget: the check cannot see a stop", r.Config.Budget)
			}
		})
	}
}

// Nodes that crash and restart on their journals resume their leases.
func TestLeaseSimResumes(t *testing.T) {
	oneAtATime(t)
	cfg := DefaultLeaseConfig()
	cfg.Seed = 6
	cfg.Nodes, cfg.Duration = scale(60, 20*time.Minute)
	cfg.Faults = Faults{KillPerHour: 12}
	r := runLease(t, cfg)
	for _, v := range r.Violations {
		t.Error(v)
	}
	if r.Resumes == 0 || r.Kills == 0 {
		t.Errorf("no resumed lease in %d crashes: %s", r.Kills, r.Summary())
	}
}

// segmentFloorSeeds are histories in which an allocator, after a failover or with a
// range another process handed back, takes a range whose first counter value sits
// right at the floor it asked above, all within segmentFloorRun. A floor one counter
// too low there gives an ID below the allocator's previous one; seed 1 has no such
// moment. They run for segmentFloorRun only, with and without the race detector.
var segmentFloorSeeds = []uint64{26, 33}

const segmentFloorRun = 4*time.Minute + 30*time.Second

// The segment allocator on several stores with failover, crashes and graceful
// restarts that hand ranges back: no ID twice, each allocator's IDs increasing, every
// ID from a range its process holds, nothing issued from a range handed back.
func TestSegmentSim(t *testing.T) {
	oneAtATime(t)
	seeds := append([]uint64{1}, segmentFloorSeeds...)
	seeds = append(seeds, rand.Uint64()>>1)
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			cfg := DefaultSegConfig()
			cfg.Seed = seed
			cfg.Allocators, cfg.Duration = scale(20, 15*time.Minute)
			if slices.Contains(segmentFloorSeeds, seed) {
				cfg.Duration = segmentFloorRun
			}
			t.Logf("replay: go run ./verify/sim/cmd/simrun -segment -seed %d -seeds 1 -allocators %d -hours %g (or go test ./verify/sim -run TestSegmentSim -simseed %d)", seed, cfg.Allocators, cfg.Duration.Hours(), seed)
			w, err := NewSegWorld(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := w.Run()
			t.Log(r.Summary())
			for _, v := range r.Violations {
				t.Error(v)
			}
			switch {
			case r.IDs == 0:
				t.Errorf("the run exercised too little: %s", r.Summary())
			case r.Kills == 0 || r.Returns == 0 || r.Outages == 0:
				// Kills are drawn at random over a short run (CI drew none in
				// 7.5 simulated minutes with seed 215353702837454906), and a
				// hand-back needs a graceful restart (one kill in three) while its
				// store answers and with a range to spare: a random seed may draw
				// none. The fixed seed shows the setup exercises them.
				if seed == 1 {
					t.Errorf("the run exercised too little: %s", r.Summary())
				} else {
					t.Logf("this seed killed nothing, handed nothing back or had no outage; seed 1 covers all three")
				}
			}
		})
	}
}

// A store that hands out values twice (a replica missing the last writes) is caught.
func TestSegmentSimCatchesLaggingReplica(t *testing.T) {
	oneAtATime(t)
	cfg := DefaultSegConfig()
	cfg.Seed, cfg.LaggingReplica = 1, true
	cfg.Allocators, cfg.Duration = scale(20, 10*time.Minute)
	w, err := NewSegWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := w.Run()
	t.Log(r.Summary())
	if r.ByKind["duplicate"] == 0 {
		t.Fatalf("a lagging replica went unnoticed: %v", r.ByKind)
	}
	t.Logf("first: %v", r.Violations[0])
}

func TestIntervals(t *testing.T) {
	var s intervals
	for _, c := range []int64{5, 7, 6, 1, 3, 2, 10, 4} {
		if !s.add(c) {
			t.Fatalf("%d reported as seen", c)
		}
	}
	for _, c := range []int64{1, 4, 7, 10} {
		if s.add(c) {
			t.Fatalf("%d not reported as seen", c)
		}
	}
	if len(s) != 2 || s[0] != (interval{1, 7}) || s[1] != (interval{10, 10}) {
		t.Fatalf("intervals %v", s)
	}
	if !s.overlaps(8, 10) || s.overlaps(8, 9) || !s.overlaps(0, 1) {
		t.Fatal("overlaps")
	}
}
