package harness

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// regionsPrefix names the test's namespaces (not those of a faultrun).
const regionsPrefix = "fhrgt"

// TestRegionsScenario runs the regions schedule, short (a 3 s outage budget, so
// that the cut and the store outage outlast it in 8 s), on two fresh regions and
// checks every ID of both: no duplicate across them, each node's IDs increasing,
// every ID in range; each region answered its calls throughout the cut. Then the
// two self-tests: both regions given the same datacenter value (and each node the
// worker value of one in the other region) must show duplicates, and a region leasing from the other region's etcd must fail the cut
// check, both while the regions are cut apart and while one is cut off.
func TestRegionsScenario(t *testing.T) {
	ctx, seed, replay, flurry, client := startScenarioTest(t, "TestRegionsScenario", "about three minutes", 10*time.Minute)
	const budget = 3 * time.Second
	load := Load{Workers: 2, Count: 100, Timeout: 2 * time.Second, MaxRequests: 100_000, Rate: 40, CallRate: 400}

	run := func(t *testing.T, o RegionsOptions, sc Scenario) *RegionsOutcome {
		t.Helper()
		var log bytes.Buffer
		o.Flurry, o.Client, o.Log, o.Prefix, o.Budget, o.KeepDir = flurry, client, &log, regionsPrefix, budget, true
		s, err := StartRegions(ctx, o)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		defer func() {
			if !t.Failed() {
				os.RemoveAll(s.Dir)
			} else {
				t.Logf("logs kept in %s", s.Dir)
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			if left, _ := netns.List(context.Background(), regionsPrefix); len(left) != 0 {
				t.Errorf("namespaces left after Close: %v", left)
			}
		}()
		if sc.Load == (Load{}) {
			sc.Load = load
		}
		out, err := RunRegions(ctx, s, sc)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if t.Failed() {
			t.Logf("harness log:\n%s", log.String())
		}
		return out
	}

	t.Run("schedule", func(t *testing.T) {
		sc, err := PlanRegions("short", seed, budget, 2*time.Second, true, RegionsGroup)
		if err != nil {
			t.Fatal(err)
		}
		out := run(t, RegionsOptions{}, sc)
		var md bytes.Buffer
		if err := WriteRegionsReport(&md, sc, out, ReportInfo{Command: replay, Budget: budget}); err != nil {
			t.Fatal(err)
		}
		t.Logf("report:\n%s", md.String())
		checkOutcome(t, &out.Outcome)
		if len(out.Windows) != len(RegionKinds()) {
			t.Errorf("%d fault windows, want %d", len(out.Windows), len(RegionKinds()))
		}
		// Both regions issued, and a region's callers were served by the other
		// region while its nodes were down.
		nodes := map[string]int64{}
		for _, n := range out.Result.Namespaces[0].Nodes {
			nodes[n.Node[:1]] += n.IDs
		}
		if nodes["a"] == 0 || nodes["b"] == 0 {
			t.Errorf("IDs per region %v: want both", nodes)
		}
		for _, row := range out.Rows {
			if row.Kind == KindRegionDown && row.Region == regionOf(strings.Fields(row.Window)[1]) && row.Remote == 0 {
				t.Errorf("%s: region %s's callers got no ID from the other region", row.Window, row.Region)
			}
		}
	})

	t.Run("same datacenter finds duplicates", func(t *testing.T) {
		// Two nodes on one node value repeat an ID when both issue in one
		// millisecond (both start each tick's sequence at 0). Each node of a leases
		// the worker value of one node of b (FixedWorkers), and the raw clients go
		// as fast as the nodes answer, so that each pair shares ticks throughout the
		// run; a second run is made only if the first met none, and every duplicate
		// either finds is the plant's.
		const tries = 2
		var sums []string
		for try := 1; try <= tries; try++ {
			sc := Scenario{Name: "same datacenter", Seed: seed + uint64(try), Lead: 8 * time.Second}
			sc.Load = Load{Workers: 2, Count: 100, Timeout: 2 * time.Second, MaxRequests: 100_000, CallRate: 400}
			out := run(t, RegionsOptions{Datacenters: [2]int{1, 1}, FixedWorkers: true}, sc)
			if d := out.Result.Totals.Duplicates; d > 0 {
				t.Logf("two regions with datacenter 1: %d duplicates in run %d, as there must be", d, try)
				return
			}
			sums = append(sums, out.Result.Summary())
		}
		t.Errorf("two regions with datacenter 1 and the same worker values gave no duplicate in %d runs (%s)", tries, strings.Join(sums, "; "))
	})

	t.Run("a store across the cut fails the cut check", func(t *testing.T) {
		// Both cuts: the regions cut apart, and a region cut off (either one:
		// region a's nodes lose region b's etcd both ways).
		sc, err := PlanRegions("store across", seed, budget, 2*time.Second, true, KindRegionCut, KindRegionIsolated)
		if err != nil {
			t.Fatal(err)
		}
		out := run(t, RegionsOptions{LeaseFrom: [2]string{"b", ""}}, sc)
		for _, fr := range out.Faults {
			if fr.Err != nil {
				t.Errorf("fault %q: %v", fr.Fault.Name, fr.Err)
			}
		}
		for _, f := range sc.Faults {
			if !slices.ContainsFunc(out.Problems, func(p string) bool { return strings.Contains(p, f.Name) }) {
				t.Errorf("region a leasing from region b's etcd passed the cut check during %q: %q %+v", f.Name, out.Problems, out.Rows)
			}
		}
		if !t.Failed() {
			t.Logf("region a leasing from region b's etcd: %q, as it must", out.Problems)
		}
	})
}
