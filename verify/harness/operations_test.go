package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// TestOperationsCountsAcrossProcesses: an operations fault's workload hands the
// checker every op under the name of the process that answered it, out of the
// availability figures, so that IDs that an original and its copy both issued
// count as duplicates in the fault's window; the report's operations section gives
// each kind's duplicates and IDs per process, and says which kinds the schedule
// left out.
func TestOperationsCountsAcrossProcesses(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "ops.tsv")
	var b []byte
	// n1 and its copy each answer 3 batches of 1,000; the copy's second batch
	// is n1's second (same value, same tick): 1,000 duplicates.
	for k := 0; k < 3; k++ {
		at := t0.Add(time.Duration(k) * time.Second)
		b = oplog.Append(b, checker.Op{Client: "ops", Node: "n1", Namespace: NSEtcd, Start: at, End: at.Add(time.Millisecond),
			IDs: seqIDs(int64(1_000_000*(k+1)), 1000)})
		first := int64(1_000_000*(k+1) + 500_000)
		if k == 1 {
			first = 2_000_000
		}
		b = oplog.Append(b, checker.Op{Client: "ops", Node: "n1-copy", Namespace: NSEtcd, Start: at.Add(2 * time.Millisecond),
			End: at.Add(3 * time.Millisecond), IDs: seqIDs(first, 1000)})
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ck := checker.New(Namespaces())
	avail := 0
	e := &Env{C: &Cluster{}, ops: func(op checker.Op) {
		if !op.NoAvailability {
			avail++
		}
		ck.Add(op)
	}}
	a := &cloneNode{i: 0, crashed: true, load: &opsLoad{proc: &Proc{Name: "client-ops"}, out: path}}
	if err := a.End(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if ids := a.processIDs(); ids["n1"] != 3000 || ids["n1-copy"] != 3000 || len(ids) != 2 {
		t.Fatalf("IDs per process %v, want n1 3000 and n1-copy 3000", ids)
	}
	if avail != 0 {
		t.Errorf("%d ops in the availability figures, want none", avail)
	}
	f := FaultRun{Fault: Fault{Name: "n1 SIGKILL, its data directory copied to a second server", Kind: "clone-crashed", For: 10 * time.Second, Action: a},
		Start: t0.Add(-time.Second), End: t0.Add(5 * time.Second)}
	out := &Outcome{Checker: ck, Faults: []FaultRun{f}, Windows: []checker.Window{{Name: f.Fault.Name, Start: f.Start, End: f.End}}}
	out.Result = ck.Check(out.Windows)
	if got := out.Result.Totals.Duplicates; got != 1000 {
		t.Fatalf("%d duplicates, want 1000 (the copy's second batch)", got)
	}
	var sb strings.Builder
	writeOperations(&sb, out)
	rep := sb.String()
	for _, want := range []string{
		"| clone-crashed | SIGKILLs a node",
		"**1,000 duplicates** (IDs answered: n1 3,000, n1-copy 3,000)",
		"| silent-leaf | Runs a stand-in Leaf",
		"not in this schedule |",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	for _, k := range OperationsKinds() {
		if does, mimics := opsKindDoc(k); does == "" || mimics == "" || operationsCause(k) == "" {
			t.Errorf("kind %s has no description or cause in the report", k)
		}
	}
}

func seqIDs(first int64, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	return ids
}
