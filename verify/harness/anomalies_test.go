package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/checker"
)

// TestAnomalyLines: each anomaly example becomes one line that names the
// namespace, the IDs, both ops with their times relative to the load's start (and
// when a buffering client's IDs were asked for), a restart between them, and the
// fault in effect; a clean run gives none.
func TestAnomalyLines(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	s := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	faults := []FaultRun{{Fault: Fault{Name: "n1 restarted 30s behind", Kind: "skew-behind"}, Start: s(10), End: s(17)}}

	clean := checker.New(Namespaces())
	clean.Add(checker.Op{Client: "c1", Node: "n1", Namespace: NSEtcd, Start: s(0), End: s(0.1), IDs: []int64{100}})
	clean.Add(checker.Op{Client: "c1", Node: "n1", Namespace: NSEtcd, Start: s(1), End: s(1.1), IDs: []int64{200}})
	if lines := AnomalyLines(clean.Check(nil), faults, 5*time.Second); len(lines) != 0 {
		t.Fatalf("a clean run gave anomaly lines: %q", lines)
	}

	ck := checker.New(Namespaces())
	ck.Add(checker.Op{Client: "c1", Node: "n1", Namespace: NSEtcd, Start: s(0), End: s(0.1), IDs: []int64{500}})
	ck.Restarted(checker.Restart{Node: "n1", At: s(11)})
	// Below n1's earlier ID after its restart: an order violation across it.
	ck.Add(checker.Op{Client: "c2-go0.1", Node: "n1", Namespace: NSEtcd, Start: s(12.5), End: s(12.6), Asked: s(12.25), IDs: []int64{400}})
	// The same ID from two nodes: a duplicate, outside every fault window.
	ck.Add(checker.Op{Client: "c1", Node: "n2", Namespace: NSRedis, Start: s(30), End: s(30.1), IDs: []int64{7}})
	ck.Add(checker.Op{Client: "c2", Node: "n3", Namespace: NSRedis, Start: s(31), End: s(31.1), IDs: []int64{7}})
	r := ck.Check(nil)
	lines := AnomalyLines(r, faults, 5*time.Second)
	all := strings.Join(lines, "\n")
	t.Logf("lines:\n%s", all)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (an order violation, a duplicate)", len(lines))
	}
	for _, want := range []string{
		NSEtcd + ": 500 then 400 on n1", "across a restart of the node", "c1→n1 T+0.000s–T+0.100s (1 IDs)",
		"c2-go0.1→n1 T+12.500s–T+12.600s asked T+12.250s (1 IDs)", `during "n1 restarted 30s behind" (skew-behind)`,
		NSRedis + ": ID 7 received 2 times", "c1→n2 T+30.000s–T+30.100s", "c2→n3 T+31.000s–T+31.100s", "outside every fault window",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the lines", want)
		}
	}
}
