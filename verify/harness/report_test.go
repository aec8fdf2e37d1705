package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/netns"
)

// TestReportOutagesAndRestarts: the report shows a snowflake namespace answering
// through an outage shorter than its budget (zero refusals), one stopping once the
// budget of a longer outage is spent, with the logged cause and when refusals
// began after the outage's start; both workloads' availability; and each restart's
// time to its first ID against its target.
func TestReportOutagesAndRestarts(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	s := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	f30 := FaultRun{Fault: Fault{Name: "etcd hangs for 30s (all nodes)", Kind: "hangs-etcd-30s", For: OutageWithinBudget,
		Action: StoreDown(StoreEtcd, netns.Drop)}, Start: s(10), End: s(40)}
	f90 := FaultRun{Fault: Fault{Name: "redis refuses for 1m30s (all nodes)", Kind: "refuses-redis-90s", For: OutagePastBudget,
		Action: StoreDown(StoreRedis, netns.Reject)}, Start: s(50), End: s(140)}
	out := &Outcome{Faults: []FaultRun{f30, f90}, TTL: LeaseTTL(0, 0), Budget: DefaultBudget}
	ck := checker.New(Namespaces())
	next := map[string]int64{}
	add := func(ns string, sec float64, err string) {
		op := checker.Op{Client: "c1", Node: "n1", Namespace: ns, Start: s(sec), End: s(sec + 0.01), Err: err}
		if err == "" {
			next[ns] += 10
			op.IDs = []int64{next[ns]}
		}
		ck.Add(op)
		out.raw = append(out.raw, opMark{ns: ns, node: "n1", err: err, start: op.Start, end: op.End,
			refused: strings.HasPrefix(err, "503"), answered: err == ""})
	}
	for sec := 0.0; sec < 150; sec += 0.5 {
		add(NSEtcd, sec, "")
		add(NSSegment, sec, "")
		switch {
		case sec >= 110.5 && sec < 140:
			add(NSRedis, sec, "503 namespace sfr holds no valid lease on a node value")
			add(NSRedisGen, sec, "503 namespace rg cannot issue now")
		case sec >= 50 && sec < 140:
			add(NSRedis, sec, "")
			add(NSRedisGen, sec, "503 namespace rg cannot issue now")
		default:
			add(NSRedis, sec, "")
			add(NSRedisGen, sec, "")
		}
	}
	out.calls = []call{
		{caller: "c1-go0.0", ns: NSEtcd, node: "n1", start: s(0), end: s(149), ids: 1000},
		{caller: "c1-go0.0", ns: NSRedis, node: "n1", start: s(0), end: s(110), ids: 500},
		{caller: "c1-go0.0", ns: NSRedis, err: "503 namespace sfr holds no valid lease on a node value", start: s(111), end: s(111.1)},
		{caller: "c1-go0.0", ns: NSRedis, node: "n2", start: s(111.2), end: s(140.5), ids: 1},
	}
	out.Calls = sumCalls(out.calls)
	out.logs = []logRefusal{{node: "n1", ns: NSRedis, at: s(110.6),
		err: "lease: lease lost: node worker=0: the lease store has not confirmed a reservation within the outage budget (1m0s)"}}
	out.Restarts = []RestartTime{
		{Node: "n1", Namespace: NSEtcd, Kind: "SIGKILL, restart", At: s(145), First: 420 * time.Millisecond, Answered: true, Last: "connection refused"},
		{Node: "n1", Namespace: NSRedis, Kind: "SIGKILL, restart", At: s(145), First: 12 * time.Second, Answered: true, Last: "503 namespace sfr holds no valid lease on a node value"},
		{Node: "n2", Namespace: NSEtcd, Kind: "SIGTERM, restart 30s behind", Behind: 30 * time.Second, At: s(146), First: 30500 * time.Millisecond, Answered: true},
		{Node: "n2", Namespace: NSRedisGen, Kind: "SIGTERM, restart 30s behind", At: s(146), First: 2 * time.Second, Answered: false, Cut: "the node was restarted again"},
	}
	out.Windows = []checker.Window{{Name: f30.Fault.Name, Start: f30.Start, End: f30.End}, {Name: f90.Fault.Name, Start: f90.Start, End: f90.End}}
	out.Result = ck.Check(out.Windows)
	out.Refusals = refusals(out.raw, time.Second)

	var b bytes.Buffer
	sc := Scenario{Name: "t", Seed: 1}
	if err := WriteReport(&b, sc, out, ReportInfo{Command: "faultrun", RedisURL: "redis://r1"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"an outage budget of 1m0s (`snowflake.lease.budget`), the lease TTL derived from it (1m9s)",
		"| etcd hangs for 30s (all nodes) | 30s | sfe | 0 (0) | 0 (0) | none | – | answers throughout (shorter than the 1m0s budget): **yes** |",
		"| redis refuses for 1m30s (all nodes) | 1m30s | sfr | 59 (59) | 1 (1) | +60.5s | " + CauseBudget + " ×1 | answers for the 1m0s budget, then refuses until the store answers: stopped 0.5s after it was spent |",
		"| redis refuses for 1m30s (all nodes) | 1m30s | rg | 180 (180) | 0 (0) | +0.0s | – | refuses at once: every ID is made inside Redis |",
		"| sfr | 300 | 80.33% | 502 | 99.80% | 29.5s | T+111.0s, redis refuses for 1m30s (all nodes) |",
		"| SIGKILL, restart (T+145.0s) | n1 | sfe | 420ms | ≤ 1s: **yes** | connection refused |",
		"| SIGKILL, restart (T+145.0s) | n1 | sfr | 12s | ≤ 1s: **no** |",
		"| SIGTERM, restart 30s behind (T+146.0s) | n2 | sfe | 30.5s | ≤ 1s: **no** | – |",
		"| SIGTERM, restart 30s behind (T+146.0s) | n2 | rg | no ID in 2s (the node was restarted again) | ≤ 1s: **no** | – |",
		"| redis refuses for 1m30s (all nodes) | sfr | n1 | 29.5s | T+110.5s | 503 namespace sfr holds no valid lease on a node value | " + CauseBudget + " ×1 | The outage outlasted the outage budget (1m0s).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks\n%s", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", md)
	}
}
