package harness

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// TestPlanRegions: one seed gives one schedule; each regions kind appears once,
// gap apart; the cut and the store outage outlast the budget; the seed picks the
// region of the other faults; unknown or one-region kinds are refused.
func TestPlanRegions(t *testing.T) {
	budget, gap := 20*time.Second, 3*time.Second
	a, err := PlanRegions("r", 11, budget, gap, false, RegionsGroup)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PlanRegions("r", 11, budget, gap, false)
	if a.Describe() != b.Describe() {
		t.Errorf("seed 11 gave two schedules (the group and no kinds must be the same):\n%s\n%s", a.Describe(), b.Describe())
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
		switch f.Kind {
		case KindRegionCut, KindRegionStoreDown, KindRegionIsolated:
			if f.For <= budget {
				t.Errorf("%s lasts %s, not past the budget %s", f.Name, f.For, budget)
			}
		default:
			if f.For < 10*time.Second || f.For >= 15*time.Second {
				t.Errorf("%s lasts %s, want 10 to 15 s", f.Name, f.For)
			}
		}
	}
	slices.Sort(kinds)
	all := RegionKinds()
	slices.Sort(all)
	if !slices.Equal(kinds, all) {
		t.Errorf("kinds %v, want each of %v once", kinds, all)
	}

	// Over seeds, both regions are picked for each one-region kind, and the
	// order changes.
	picked := map[string]map[string]bool{}
	orders := map[string]bool{}
	for seed := uint64(0); seed < 40; seed++ {
		sc, err := PlanRegions("r", seed, budget, gap, false)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, f := range sc.Faults {
			order = append(order, f.Kind)
			if f.Kind == KindRegionCut {
				continue
			}
			if picked[f.Kind] == nil {
				picked[f.Kind] = map[string]bool{}
			}
			picked[f.Kind][strings.Fields(f.Name)[1][:1]] = true
		}
		orders[strings.Join(order, ",")] = true
	}
	for _, k := range []string{KindRegionStoreDown, KindRegionDown, KindRegionClockBack, KindRegionIsolated} {
		if !picked[k]["a"] || !picked[k]["b"] {
			t.Errorf("%s: regions picked over 40 seeds %v, want both", k, picked[k])
		}
	}
	if len(orders) < 2 {
		t.Errorf("40 seeds gave one order")
	}

	kept, _ := PlanRegions("r", 5, budget, gap, true, KindRegionDown, KindRegionCut)
	if len(kept.Faults) != 2 || kept.Faults[0].Kind != KindRegionDown || kept.Faults[1].Kind != KindRegionCut {
		t.Errorf("keepOrder: %s", kept.Describe())
	}
	if _, err := PlanRegions("r", 1, budget, gap, false, "sigkill-node"); err == nil {
		t.Error("a one-region kind was accepted by PlanRegions")
	}
	if !IsRegions([]string{RegionsGroup}) || !IsRegions([]string{KindRegionCut}) || IsRegions(nil) ||
		IsRegions([]string{KindRegionCut, "sigkill-node"}) {
		t.Error("IsRegions misjudges a kind list")
	}
	if d := PastBudget(time.Minute); d != 75*time.Second {
		t.Errorf("PastBudget(1m) = %s, want 1m15s", d)
	}
	if d := PastBudget(4 * time.Second); d != 9*time.Second {
		t.Errorf("PastBudget(4s) = %s, want 9s", d)
	}
}

// TestRegionRowsAndCutCheck: calls and raw requests are summed per region and per
// fault window by their start; IDs from the other region's nodes are counted; the
// cut check passes when each region answered throughout the cut, and fails, naming
// the region, when calls failed or its nodes refused during it (the planted
// failure), or when a region made no call at all.
func TestRegionRowsAndCutCheck(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	s := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	cut := FaultRun{Fault: Fault{Name: "regions cut apart", Kind: KindRegionCut, For: 10 * time.Second}, Start: s(10), End: s(20)}
	down := FaultRun{Fault: Fault{Name: "region a's 3 nodes SIGKILL", Kind: KindRegionDown, For: 5 * time.Second}, Start: s(30), End: s(35)}
	runs := []FaultRun{cut, down}
	healthy := func() ([]call, []opMark) { return healthyRegions(s, 10) }
	calls, raw := healthy()
	rows := regionRows(calls, raw, runs, s(0), s(40))
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6 (whole run and two windows, two regions)", len(rows))
	}
	byKey := map[string]RegionRow{}
	for _, r := range rows {
		byKey[r.Kind+"/"+r.Region] = r
	}
	if r := byKey["/a"]; r.Calls.Calls != 800 || r.Calls.Answered != 800 || r.Remote != 110 || r.Requests != 80 {
		t.Errorf("whole run, region a: %+v; want 800 calls answered, 110 IDs from b (11 ops of 10), 80 raw requests", r)
	}
	if r := byKey[KindRegionDown+"/a"]; r.Remote != r.Calls.Answered || r.Remote == 0 {
		t.Errorf("region down, region a: %d of %d IDs from b, want all", r.Remote, r.Calls.Answered)
	}
	if r := byKey[KindRegionCut+"/b"]; r.Calls.Calls != 210 || r.Remote != 0 {
		t.Errorf("cut, region b: %+v; want 210 calls (21 ops of 10 begun in the window), none from a", r)
	}
	if p := cutProblems(rows, MinCutAvailability, true); len(p) != 0 {
		t.Errorf("healthy regions: cut check failed: %v", p)
	}

	// Planted: region a's callers fail during the cut (1 call in 100: 99% < 99.9%).
	calls, raw = healthy()
	for i := range calls {
		if c := &calls[i]; c.caller == "ac1-go0.0" && !c.start.Before(s(12)) && c.start.Before(s(14)) {
			c.ids = 0
			c.err = "every server failed"
			c.node = oplog.NoNode
			break
		}
	}
	p := cutProblems(regionRows(calls, raw, runs, s(0), s(40)), MinCutAvailability, true)
	if len(p) != 1 || !strings.Contains(p[0], "region a answered") {
		t.Errorf("a failed call in region a during the cut: problems %q, want one naming region a's Go-client calls", p)
	}

	// Planted: region b's nodes refuse during the cut (the raw requests).
	calls, raw = healthy()
	for i := range raw {
		if o := &raw[i]; o.node == "bn1" && o.start.Equal(s(15)) {
			o.answered, o.refused, o.err = false, true, "503 namespace sfd holds no valid lease on a node value"
		}
	}
	p = cutProblems(regionRows(calls, raw, runs, s(0), s(40)), MinCutAvailability, true)
	if len(p) != 1 || !strings.Contains(p[0], "region b's nodes answered") {
		t.Errorf("region b refusing during the cut: problems %q, want one naming region b's nodes", p)
	}

	// A region that made no call during the cut is not a pass.
	calls, raw = healthy()
	var none []call
	for _, c := range calls {
		if c.caller[:1] == "a" || c.start.Before(s(10)) || c.start.After(s(20)) {
			none = append(none, c)
		}
	}
	p = cutProblems(regionRows(none, raw, runs, s(0), s(40)), MinCutAvailability, true)
	if len(p) != 1 || !strings.Contains(p[0], "region b made no Go-client call") {
		t.Errorf("no call in region b during the cut: problems %q", p)
	}
}

// TestRegionsReport: the report names both regions' figures, the cut check's
// verdict and the problems.
func TestRegionsReport(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	cut := FaultRun{Fault: Fault{Name: "regions cut apart for 1m15s", Kind: KindRegionCut, For: 75 * time.Second},
		Start: t0.Add(5 * time.Second), End: t0.Add(80 * time.Second)}
	ck := checker.New(RegionNamespaces())
	ck.Add(checker.Op{Client: "ac1", Node: "an1", Namespace: NSRegion, Start: t0, End: t0.Add(time.Millisecond), IDs: []int64{1 << 22}})
	out := &RegionsOutcome{Outcome: Outcome{Checker: ck, Faults: []FaultRun{cut}, Budget: DefaultBudget, TTL: LeaseTTL(0, 0)},
		RTT: 61 * time.Millisecond, Delay: 30 * time.Millisecond, Datacenters: map[string]int{"a": 1, "b": 2},
		Rows: []RegionRow{{Region: "a", Calls: Calls{Calls: 1000, Answered: 1000}, Remote: 250, Requests: 50, Answered: 50},
			{Region: "a", Window: cut.Fault.Name, Kind: KindRegionCut, Calls: Calls{Calls: 400, Answered: 399, Errors: map[string]int64{"every server failed": 1}}, Requests: 20, Answered: 20}}}
	out.Result = ck.Check(nil)
	out.Problems = cutProblems(out.Rows, MinCutAvailability, true)
	var b bytes.Buffer
	if err := WriteRegionsReport(&b, Scenario{Seed: 11, Faults: []Fault{cut.Fault}}, out, ReportInfo{Command: "faultrun -kinds regions"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"# Reliability: flurry in two regions", "round trip measured between them was 61ms",
		"a is 1, b is 2", "| **whole run** | a | 1,000 | 100.000% | 25.00% |", "every server failed: 1",
		"**Problem:** region a answered 99.750% of its Go-client calls"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "The cut check: **passed**") {
		t.Error("the report says the cut check passed with a problem")
	}
}

// TestIsolatedCheckAndExpectations: while region b is cut off, the cut check
// holds for both regions (b's own clients still reach it, a's are answered by
// their own region) and fails, naming the region, when b's nodes refuse their own
// clients (the planted failure); the report's expectations say whether each fault
// did what its kind plans, and region a's callers served by the cut-off region
// (impossible through the cut: the planted failure) make that row **no**.
func TestIsolatedCheckAndExpectations(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	s := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	iso := FaultRun{Fault: Fault{Name: "region b cut off for 9s", Kind: KindRegionIsolated, For: 10 * time.Second, Action: RegionIsolated(1)},
		Start: s(10), End: s(20)}
	down := FaultRun{Fault: Fault{Name: "region a's 3 nodes SIGKILL", Kind: KindRegionDown, For: 5 * time.Second, Action: RegionDown(0)},
		Start: s(30), End: s(35)}
	runs := []FaultRun{iso, down}
	if targetRegion(iso.Fault) != "b" || targetRegion(down.Fault) != "a" || targetRegion(Fault{Action: RegionCut()}) != "" {
		t.Fatalf("targetRegion: %q %q", targetRegion(iso.Fault), targetRegion(down.Fault))
	}
	healthy := func() ([]call, []opMark) { return healthyRegions(s, 1) }
	report := func(calls []call, raw []opMark) (*RegionsOutcome, string) {
		out := &RegionsOutcome{Outcome: Outcome{Faults: runs, Budget: 3 * time.Second}}
		out.Rows = regionRows(calls, raw, runs, s(0), s(40))
		out.Problems = cutProblems(out.Rows, MinCutAvailability, true)
		var b strings.Builder
		writeExpectations(&b, out, checker.Result{Start: t0})
		return out, b.String()
	}
	out, md := report(healthy())
	if len(out.Problems) != 0 {
		t.Errorf("healthy regions, b cut off: cut check failed: %q", out.Problems)
	}
	for _, want := range []string{
		"| region b cut off for 9s | region-isolated | region b keeps issuing for its own clients",
		"| yes (region b 100.000% of its calls, 100.000% of its raw requests; region a 100.000% of its calls, 100.000% of its raw requests; 0 IDs of region a's from region b) |",
		"| region a's 3 nodes SIGKILL | region-down | region a's Go clients get their IDs from region b, their `Remote` | yes (100.00% of region a's IDs from region b;",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("expectations lack\n%s\nin\n%s", want, md)
		}
	}

	// Planted: region b's nodes refuse their own clients while cut off.
	calls, raw := healthy()
	for i := range raw {
		if o := &raw[i]; o.node == "bn1" && o.start.Equal(s(15)) {
			o.answered, o.refused, o.err = false, true, "503 namespace sfd holds no valid lease on a node value"
		}
	}
	out, md = report(calls, raw)
	if len(out.Problems) != 1 || !strings.Contains(out.Problems[0], "region b's nodes answered") || !strings.Contains(out.Problems[0], iso.Fault.Name) {
		t.Errorf("region b refusing while cut off: problems %q, want one naming region b's nodes and the fault", out.Problems)
	}
	if !strings.Contains(md, "| **no** (region b 100.000% of its calls, 95.238% of its raw requests;") {
		t.Errorf("region b refusing while cut off: expectations do not say no:\n%s", md)
	}

	// Planted: region a's callers served by region b's nodes through the cut.
	calls, raw = healthy()
	for i := range calls {
		if c := &calls[i]; c.caller == "ac1-go0.0" && c.start.Equal(s(12)) {
			c.node = "bn1"
		}
	}
	_, md = report(calls, raw)
	if !strings.Contains(md, "| **no** (") || !strings.Contains(md, "1 IDs of region a's from region b) |") {
		t.Errorf("region a served by the cut-off region: expectations do not say no:\n%s", md)
	}
}

// healthyRegions is 40 s of both regions answering every Go-client call (of ids
// IDs each) and raw request, two of each a second, but for region a's callers
// served by region b from 30 to 35 s, while a is down.
func healthyRegions(s func(sec float64) time.Time, ids int) ([]call, []opMark) {
	var calls []call
	var raw []opMark
	for sec := 0.0; sec < 40; sec += 0.5 {
		for _, reg := range []string{"a", "b"} {
			node := reg + "n1"
			if reg == "a" && sec >= 30 && sec <= 35 {
				node = "bn2"
			}
			calls = append(calls, call{caller: reg + "c1-go0.0", ns: NSRegion, node: node, start: s(sec), end: s(sec + 0.01), ids: ids})
			raw = append(raw, opMark{ns: NSRegion, node: reg + "n1", start: s(sec), end: s(sec + 0.01), answered: true})
		}
	}
	return calls, raw
}
