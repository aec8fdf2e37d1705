package harness

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// TestPlanSeeded: one seed gives one schedule (the replay promise); another seed
// another order; every default kind appears once, one after the other with the gap.
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
	all := DefaultKinds()
	slices.Sort(all)
	if !slices.Equal(kinds, all) {
		t.Errorf("kinds %v, want each of %v once", kinds, all)
	}
}

// TestPlanDurations: faults last 5 to 8 s whatever the TTL (with the default
// outage budget a snowflake namespace must ride through them); a takeover outlasts
// the lease it waits out; the long store outages last 30 and 90 s, and the default
// schedule has both lengths, for etcd and for Redis, hanging and refusing.
func TestPlanDurations(t *testing.T) {
	ttl := LeaseTTL(0, 0)
	for seed := uint64(0); seed < 50; seed++ {
		sc, err := Plan("x", seed, ttl, time.Second, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sc.Faults {
			sd, long := f.Action.(storeDown)
			switch {
			case f.Kind == "sigstop-takeover":
				if f.For < ttl+4*time.Second {
					t.Errorf("seed %d: %s lasts %s, not 4 s past the TTL %s it waits out", seed, f.Name, f.For, ttl)
				}
			case f.Kind == "rolling-restart":
			case long && (f.For == OutageWithinBudget || f.For == OutagePastBudget):
				if !strings.HasSuffix(f.Kind, fmt.Sprintf("-%ds", int(f.For/time.Second))) {
					t.Errorf("%s (%s) lasts %s", f.Kind, sd.s, f.For)
				}
			case f.For < 5*time.Second || f.For >= 8*time.Second:
				t.Errorf("seed %d: %s lasts %s, want 5 to 8 s", seed, f.Name, f.For)
			}
		}
	}
	type outage struct {
		s    Store
		drop bool
		d    time.Duration
	}
	seen := map[outage]bool{}
	stores := map[Store]map[bool]bool{}
	sc, _ := Plan("x", 1, ttl, time.Second, true)
	for _, f := range sc.Faults {
		if sd, ok := f.Action.(storeDown); ok && f.For >= OutageWithinBudget {
			seen[outage{sd.s, sd.how == netns.Drop, f.For}] = true
			if stores[sd.s] == nil {
				stores[sd.s] = map[bool]bool{}
			}
			stores[sd.s][sd.how == netns.Drop] = true
		}
	}
	for _, s := range []Store{StoreEtcd, StoreRedis} {
		var lengths []time.Duration
		for o := range seen {
			if o.s == s {
				lengths = append(lengths, o.d)
			}
		}
		if !slices.Contains(lengths, OutageWithinBudget) || !slices.Contains(lengths, OutagePastBudget) || !stores[s][true] || !stores[s][false] {
			t.Errorf("default schedule's long %s outages %v: want 30 s and 90 s, hanging and refusing", s, seen)
		}
	}
	if _, err := Plan("x", 1, ttl, time.Second, true, "no-such-fault"); err == nil {
		t.Error("an unknown kind gave no error")
	}
	if _, err := Plan("x", 1, ttl, time.Second, true, "hangs-etcd-90s"); err != nil {
		t.Errorf("an extra kind named: %v", err)
	}
}

// TestLeaseTTL: with no TTL set the harness waits out the TTL flurry derives from
// the outage budget (docs/leases.md): 69 s for the default minute.
func TestLeaseTTL(t *testing.T) {
	for _, tc := range []struct{ ttl, budget, want time.Duration }{
		{0, 0, 69 * time.Second},
		{0, time.Minute, 69 * time.Second},
		{0, 10 * time.Second, 14 * time.Second}, // 12.05 s / 0.9 = 13.4 s
		{0, 7 * time.Second, 11 * time.Second},  // 9.05 s / 0.9 = 10.06 s, rounded up
		{4 * time.Second, time.Minute, 4 * time.Second},
	} {
		if got := LeaseTTL(tc.ttl, tc.budget); got != tc.want {
			t.Errorf("LeaseTTL(%v, %v) = %v, want %v", tc.ttl, tc.budget, got, tc.want)
		}
	}
}

// TestNodeConfigDefaults: the snowflake namespaces carry no ttl, window or budget
// key unless the options set one.
func TestNodeConfigDefaults(t *testing.T) {
	hosts := func(prefix string, n, base int) []*netns.Host {
		var hs []*netns.Host
		for i := range n {
			hs = append(hs, &netns.Host{Name: fmt.Sprintf("%s%d", prefix, i+1), Addr: netip.AddrFrom4([4]byte{10, 9, 0, byte(base + i)})})
		}
		return hs
	}
	c := &Cluster{EtcdHosts: hosts("e", 3, 1), RedisHosts: hosts("r", 3, 4), PGHosts: hosts("pg", 2, 7), NodeHosts: hosts("n", 3, 9),
		ZKHosts: hosts("z", 3, 12)}
	conf := c.nodeConfig(c.NodeHosts[0], "/data")
	for _, key := range []string{"ttl:", "window:", "budget:"} {
		if strings.Contains(conf, key) {
			t.Errorf("default configuration sets %s\n%s", key, conf)
		}
	}
	if !strings.Contains(conf, `lease: {store: "etcd://10.9.0.1:2379,10.9.0.2:2379,10.9.0.3:2379/fh?dial_timeout=2s"}`) {
		t.Errorf("etcd lease line missing:\n%s", conf)
	}
	if !strings.Contains(conf, `lease: {store: "zk://10.9.0.12:2181,10.9.0.13:2181,10.9.0.14:2181/fh?dial_timeout=2s"}`) {
		t.Errorf("ZooKeeper lease line missing:\n%s", conf)
	}
	c.opt = Options{LeaseTTL: 4 * time.Second, Window: time.Second}
	conf = c.nodeConfig(c.NodeHosts[0], "/data")
	if n := strings.Count(conf, ", ttl: 4s, window: 1s}"); n != 3 {
		t.Errorf("ttl and window set: %d snowflake namespaces carry them, want 3:\n%s", n, conf)
	}
	if c.TTL() != 4*time.Second {
		t.Errorf("TTL %v with LeaseTTL 4s", c.TTL())
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

// TestPlanOperations: the operations group names every operations kind once, each
// kind also runs by its name, none is in the default schedule, and each is bounded
// (it ends, with its processes, within half a minute).
func TestPlanOperations(t *testing.T) {
	ttl := LeaseTTL(0, 0)
	sc, err := Plan("x", 11, ttl, time.Second, false, OperationsGroup)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range sc.Faults {
		kinds = append(kinds, f.Kind)
		if f.For <= 0 || f.For > 30*time.Second {
			t.Errorf("%s lasts %s, want 0 < d <= 30s", f.Kind, f.For)
		}
	}
	slices.Sort(kinds)
	want := []string{"clone-crashed", "clone-running", "private-stores", "restore-backup", "revert-snapshot", "second-deployment", "silent-leaf"}
	if !slices.Equal(kinds, want) {
		t.Errorf("-kinds %s gave %v, want %v", OperationsGroup, kinds, want)
	}
	for _, k := range want {
		if slices.Contains(DefaultKinds(), k) {
			t.Errorf("%s is in the default schedule", k)
		}
		one, err := Plan("x", 11, ttl, time.Second, false, k)
		if err != nil || len(one.Faults) != 1 || one.Faults[0].Kind != k {
			t.Errorf("-kinds %s: %v %+v", k, err, one.Faults)
		}
	}
}

// TestPlanDefaultGroup: "default,operations" is the default schedule with the
// operations nemesis.
func TestPlanDefaultGroup(t *testing.T) {
	sc, err := Plan("x", 11, LeaseTTL(0, 0), time.Second, true, DefaultGroup, OperationsGroup)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(DefaultKinds()) + len(OperationsKinds()); len(sc.Faults) != want {
		t.Fatalf("%d faults, want %d", len(sc.Faults), want)
	}
}
