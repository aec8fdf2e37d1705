package harness

import (
	"slices"
	"testing"
	"time"
)

// TestPlanSeeded: one seed gives one schedule (the replay promise); another seed
// another order; every catalog kind appears once, one after the other with the gap.
func TestPlanSeeded(t *testing.T) {
	ttl, gap := 4*time.Second, 3*time.Second
	a, err := Plan("x", 42, ttl, gap, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Plan("x", 42, ttl, gap, false)
	c, _ := Plan("x", 43, ttl, gap, false)
	if a.Describe() != b.Describe() {
		t.Errorf("seed 42 gave two schedules:\n%s\n%s", a.Describe(), b.Describe())
	}
	if a.Describe() == c.Describe() {
		t.Errorf("seeds 42 and 43 gave the same schedule")
	}
	var kinds []string
	for i, f := range a.Faults {
		kinds = append(kinds, f.Kind)
		if i > 0 {
			prev := a.Faults[i-1]
			if want := prev.At + prev.For + gap; f.At != want {
				t.Errorf("fault %d at %s, want %s", i, f.At, want)
			}
		}
	}
	slices.Sort(kinds)
	all := KindNames()
	slices.Sort(all)
	if !slices.Equal(kinds, all) {
		t.Errorf("kinds %v, want each of %v once", kinds, all)
	}
}

// TestPlanOutlastsTTL: node kills, pauses and store outages last longer than a
// lease, so that leases really expire during them.
func TestPlanOutlastsTTL(t *testing.T) {
	ttl := 4 * time.Second
	for seed := uint64(0); seed < 50; seed++ {
		sc, err := Plan("x", seed, ttl, time.Second, true, "sigkill-node", "sigstop-node", "sigstop-takeover",
			"hangs-etcd", "refuses-redis", "partition-stores", "skew-behind")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sc.Faults {
			if f.For <= ttl {
				t.Errorf("seed %d: %s lasts %s, not longer than the TTL %s", seed, f.Name, f.For, ttl)
			}
		}
	}
	if _, err := Plan("x", 1, ttl, time.Second, true, "no-such-fault"); err == nil {
		t.Error("an unknown kind gave no error")
	}
}
