package checker

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestVolume feeds tens of millions of IDs (fewer under -race or -short) in batches
// of 1000 from three nodes into a snowflake and a segment namespace, plants one
// duplicate and one order violation at the very end, and checks that exactly those
// are found. It asserts counts, not time; it logs how long Check took.
// CHECKER_VOLUME=n sets the IDs per namespace (a multiple of 3000).
func TestVolume(t *testing.T) {
	perNS := 20_000_000
	if raceEnabled || testing.Short() {
		perNS = 5_000_000
	}
	if v, err := strconv.Atoi(os.Getenv("CHECKER_VOLUME")); err == nil && v > 0 {
		perNS = v
	}
	l := twitter(t)
	c := New([]Namespace{{Name: "sf", Kind: Snowflake, Layout: l}, {Name: "seg", Kind: Segment}})
	const batch = 1000
	nodes := []string{"n1", "n2", "n3"}
	gens := []*sfGen{{l: l, worker: 0}, {l: l, worker: 1}, {l: l, worker: 2}}
	segNext := []int64{1, 1 << 40, 2 << 40}
	buf := make([]int64, batch)
	var firstSeg int64
	for i := 0; i < perNS/batch; i++ {
		n := i % 3
		start := t0.Add(time.Duration(i) * 100 * time.Microsecond)
		end := start.Add(50 * time.Microsecond)
		c.Add(Op{Client: "c1", Node: nodes[n], Namespace: "sf", Start: start, End: end, IDs: gens[n].next(t, end, batch)})
		for j := range buf {
			buf[j] = segNext[n] + int64(j)
		}
		if i == 0 {
			firstSeg = buf[0]
		}
		segNext[n] += batch
		c.Add(Op{Client: "c2", Node: nodes[n], Namespace: "seg", Start: start, End: end, IDs: buf})
	}
	last := t0.Add(time.Duration(perNS/batch) * 100 * time.Microsecond)
	c.Add(Op{Client: "c2", Node: "n2", Namespace: "seg", Start: last, End: last.Add(time.Millisecond), IDs: []int64{firstSeg}})
	began := time.Now()
	r := c.Check([]Window{{Name: "tail", Start: last, End: last.Add(time.Second)}})
	took := time.Since(began)
	if r.Totals.IDs != int64(2*perNS+1) {
		t.Fatalf("%d IDs, want %d", r.Totals.IDs, 2*perNS+1)
	}
	sf, seg := r.Namespaces[0], r.Namespaces[1]
	if sf.Anomalies() != 0 {
		t.Errorf("snowflake: %+v, want no anomaly", sf.Counts)
	}
	if seg.Duplicates != 1 || seg.OrderViolations != 1 || seg.OutOfRange != 0 {
		t.Errorf("segment: %+v, want the planted duplicate and order violation", seg.Counts)
	}
	if w := r.Windows[0]; w.Duplicates != 1 || w.OrderViolations != 1 || w.IDs != 1 {
		t.Errorf("tail window: %+v, want the planted anomalies only", w.Counts)
	}
	t.Logf("%d IDs in %d ops checked in %v", r.Totals.IDs, r.Totals.Requests, took.Round(time.Millisecond))
}
