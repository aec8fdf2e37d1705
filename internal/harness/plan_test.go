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

// TestRefusals: a node's 503-only span runs from its first 503 to the sending of its
// next answered request; short spans and other nodes' answers do not count.
func TestRefusals(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ops := []opMark{
		{ns: "sfe", node: "n1", start: at(0), end: at(0.1), answered: true},
		{ns: "sfe", node: "n1", start: at(1), end: at(1.1), refused: true, err: "503 lease"},
		{ns: "sfe", node: "n2", start: at(1.5), end: at(1.6), answered: true},
		{ns: "sfe", node: "n1", start: at(2), end: at(2.1), refused: true, err: "503 other"},
		{ns: "sfe", node: "n1", start: at(2.5), end: at(2.6), err: "timeout"},
		{ns: "sfe", node: "n1", start: at(4), end: at(4.1), answered: true},
		{ns: "seg", node: "n1", start: at(5), end: at(5.1), refused: true, err: "503 seg"},
		{ns: "seg", node: "n1", start: at(5.2), end: at(5.3), answered: true},
		{ns: "rg", node: "n3", start: at(6), end: at(6.1), refused: true, err: "503 rg"},
		{ns: "rg", node: "n3", start: at(8), end: at(8.5), refused: true, err: "503 rg"},
	}
	got := refusals(ops, time.Second)
	want := []Refusal{
		{Namespace: "sfe", Node: "n1", From: at(1), To: at(4), Reason: "503 lease"},
		{Namespace: "rg", Node: "n3", From: at(6), To: at(8.5), Reason: "503 rg"},
	}
	if len(got) != len(want) {
		t.Fatalf("refusals %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Namespace != want[i].Namespace || got[i].Node != want[i].Node || !got[i].From.Equal(want[i].From) ||
			!got[i].To.Equal(want[i].To) || got[i].Reason != want[i].Reason {
			t.Errorf("refusal %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
