package sim

import (
	"math/rand/v2"
	"testing"
)

func runRegions(t *testing.T, seed uint64) *RegionReport {
	t.Helper()
	cfg := DefaultRegionConfig()
	cfg.Seed, cfg.Dir = seed, t.TempDir()
	r, err := RunRegions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %s", seed, r.Summary())
	for _, v := range r.Violations {
		t.Error(v)
	}
	if r.FromCache == 0 || r.Conflicts == 0 || r.Unreachable == 0 || r.Copies == 0 || r.Starts < 100 {
		t.Errorf("seed %d: the run exercised too little: %s", seed, r.Summary())
	}
	return r
}

// TestRegionSimFixedSeeds: the region guard (lease/region) under starts,
// restarts, a registry cut off and back, and data directories copied between
// servers of any regions, with regions drawing their names and values from
// small sets: no region value is ever issued with by two regions.
func TestRegionSimFixedSeeds(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 42} {
		runRegions(t, seed)
	}
}

// TestRegionSimRandomSeed is one more run on a random seed, printed; replay
// with -simseed N.
func TestRegionSimRandomSeed(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("replay: go test ./verify/sim -run TestRegionSimRandomSeed -simseed %d", seed)
	runRegions(t, seed)
}
