package sim

import (
	"testing"
	"time"
)

// copiesConfig is a run whose operators copy journals of running and crashed nodes
// onto new nodes, and restore journals in place from earlier copies, often with
// the clock back: short budget, many crashes.
func copiesConfig(seed uint64) LeaseConfig {
	cfg := DefaultLeaseConfig()
	cfg.Seed = seed
	cfg.Nodes, cfg.Duration = scale(120, 15*time.Minute)
	cfg.Budget = 5 * time.Second
	cfg.Faults.KillPerHour = 12
	cfg.Clones, cfg.Restores = true, true
	return cfg
}

// Journals copied (of running and crashed nodes) and restored in place (after the
// store was written again), on the real session code: no violation, and the run
// did copy, restore and resume.
func TestLeaseSimCopiedAndRestoredJournals(t *testing.T) {
	oneAtATime(t)
	cfg := copiesConfig(3)
	r := runLease(t, cfg)
	for _, v := range r.Violations {
		t.Error(v)
	}
	if r.Failed() {
		t.Errorf("violations %v", r.ByKind)
	}
	if r.Copies < 5 || r.Restores < 5 || r.Resumes == 0 {
		t.Errorf("the run exercised too little: %d copies, %d restores, %d resumes: %s", r.Copies, r.Restores, r.Resumes, r.Summary())
	}
	t.Logf("%d journals copied, %d restored", r.Copies, r.Restores)
}

// Each known-bad variant of resuming from a copied or restored journal, injected
// at the simulation's seams (its store, its journals), is caught.
func TestLeaseSimCatchesCopySeams(t *testing.T) {
	if raceEnabled {
		t.Skip("the known-bad variants run without the race detector: make test-norace")
	}
	oneAtATime(t)
	for _, tc := range []struct {
		name string
		seam Seam
	}{
		// A Takeover that keeps the token: a copy and its original both hold it.
		{"takeover-keeps-token", TakeoverKeepsToken},
		// A copied journal's mark trusted: the copy starts below what its running
		// original issues.
		{"trust-copied-journal", TrustCopies},
		// A restored journal's epoch taken for the store's: the restart starts above
		// the copy's old mark, on a clock that came back with it.
		{"trust-journal-behind-store", IgnoreEpoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen map[string]int64
			for seed := uint64(3); seed < 6; seed++ {
				cfg := copiesConfig(seed)
				cfg.Seams = tc.seam
				r := runLease(t, cfg)
				// above: a copy started at or below the mark of the holder it took
				// over from, what that holder may still issue; the others are IDs
				// out of order or issued twice.
				if r.ByKind["duplicate"]+r.ByKind["order-value"]+r.ByKind["order-holder"]+r.ByKind["above"] > 0 {
					t.Logf("caught with seed %d: %v; first: %v", seed, r.ByKind, r.Violations[0])
					return
				}
				seen = r.ByKind
			}
			t.Errorf("the %s variant ran without a duplicate, order or above violation: %v", tc.name, seen)
		})
	}
}
