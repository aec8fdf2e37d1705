package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
	"github.com/flurryid/flurry/verify/netns"
)

// Fault is one scheduled fault: a name (it labels the report's table and the chart's
// band), when it begins after the scenario's start, how long it lasts, and what it does.
type Fault struct {
	Name   string
	Kind   string // the catalog entry it came from
	At     time.Duration
	For    time.Duration
	Action Action
}

// Scenario is a seeded schedule of faults under a client load.
type Scenario struct {
	Name   string
	Seed   uint64
	Faults []Fault
	// Lead is the load before the first fault, Tail after the last one ends, Gap
	// the least load without a fault between two faults: faults run one after the
	// other, each at its At or Gap after the previous one really ended, whichever
	// is later (repairs such as a node's restart can take longer than planned).
	Lead, Tail, Gap time.Duration
	Load            Load
}

// Load is the clients' work. Each client host runs two workloads: raw HTTP
// requests for batches of IDs, which measure the nodes (fhclient), and Next calls
// through flurry's Go client, which measure what an application sees (fhclient
// -mode client).
type Load struct {
	// Workers per namespace per client host. Default 2.
	Workers int
	// Count of IDs per request. Default 1000.
	Count int
	// Timeout of one request. Default 2s.
	Timeout time.Duration
	// MaxRequests bounds each client host's requests. Default 2,000,000.
	MaxRequests int64
	// Rate is each client host's requests per second, all workers together (0: as
	// fast as the nodes answer).
	Rate float64

	// Clients is the number of Go clients per client host, each with every node
	// (in its own order) and its own buffers. Default 2; negative: no Go-client
	// workload.
	Clients int
	// Callers per namespace per Go client. Default 2.
	Callers int
	// CallRate is each client host's Next calls per second, all callers together.
	// Default 2000. A failed call costs a request to every node (the client tries
	// each before it gives up), so this is also the load of a whole-namespace
	// outage times three.
	CallRate float64
	// CallTimeout bounds one Next call (the caller's deadline). Default 10s.
	CallTimeout time.Duration
	// MaxCalls bounds each client host's Next calls. Default 20,000,000.
	MaxCalls int64
}

// withDefaults returns the load with every zero field set to its default.
func (ld Load) withDefaults() Load {
	if ld.Workers == 0 {
		ld.Workers = 2
	}
	if ld.Count == 0 {
		ld.Count = 1000
	}
	if ld.Timeout == 0 {
		ld.Timeout = 2 * time.Second
	}
	if ld.MaxRequests == 0 {
		ld.MaxRequests = 2_000_000
	}
	if ld.Clients == 0 {
		ld.Clients = 2
	}
	if ld.Callers == 0 {
		ld.Callers = 2
	}
	if ld.CallRate == 0 {
		ld.CallRate = 2000
	}
	if ld.CallTimeout == 0 {
		ld.CallTimeout = 10 * time.Second
	}
	if ld.MaxCalls == 0 {
		ld.MaxCalls = 20_000_000
	}
	return ld
}

// Kind is a catalog entry: a family of faults whose parameters (which node, which
// store, how long) the seed picks.
type Kind struct {
	Name string
	// Make draws one fault of the kind; ttl is the lease TTL the nodes run with
	// (Cluster.TTL): a fault that must outlast a lease (a takeover of a paused
	// node's value) lasts longer than it.
	Make func(r *rand.Rand, ttl time.Duration) Fault
	// Extra kinds are in the catalog but not in the default schedule (Plan with no
	// kinds): name them to run them.
	Extra bool
}

func node(r *rand.Rand) int { return r.IntN(3) }

// brief draws a fault's duration from 5 s to 8 s. It does not follow the lease TTL:
// with flurry's defaults (a 1-minute outage budget) a fault this short is one a
// snowflake namespace must ride through, which is what the run shows.
func brief(r *rand.Rand) time.Duration {
	return 5*time.Second + time.Duration(r.Int64N(int64(3*time.Second)))
}

// The lengths of the long store outages: one shorter than flurry's default outage
// budget (a snowflake namespace must answer throughout) and one longer (it must
// stop once the budget is spent, and say why).
const (
	OutageWithinBudget = 30 * time.Second
	OutagePastBudget   = 90 * time.Second
)

// Catalog is every fault kind the harness knows, in a fixed order.
func Catalog() []Kind {
	store := func(s Store, how netns.Action, verb string) Kind {
		return Kind{Name: verb + "-" + string(s), Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: fmt.Sprintf("%s %s (all nodes)", string(s), verb), For: brief(r), Action: StoreDown(s, how)}
		}}
	}
	// A long outage lasts exactly d. The default schedule holds one of each length
	// for each store, one hanging and one refusing, so that every store is seen
	// both within and past the budget, and each way of failing.
	outage := func(s Store, how netns.Action, verb string, d time.Duration, extra bool) Kind {
		return Kind{Name: fmt.Sprintf("%s-%s-%ds", verb, s, int(d/time.Second)), Extra: extra, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: fmt.Sprintf("%s %s for %s (all nodes)", string(s), verb, d), For: d, Action: StoreDown(s, how)}
		}}
	}
	return append([]Kind{
		{Name: "partition-stores", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d cut off the stores", i+1), For: brief(r), Action: PartitionStores(i)}
		}},
		{Name: "partition-clients", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d cut off the clients", i+1), For: brief(r), Action: PartitionClients(i)}
		}},
		store(StoreEtcd, netns.Drop, "hangs"),
		store(StoreEtcd, netns.Reject, "refuses"),
		store(StoreRedis, netns.Drop, "hangs"),
		store(StoreRedis, netns.Reject, "refuses"),
		store(StorePG, netns.Drop, "hangs"),
		store(StorePG, netns.Reject, "refuses"),
		store(StoreZK, netns.Drop, "hangs"),
		store(StoreZK, netns.Reject, "refuses"),
		outage(StoreEtcd, netns.Drop, "hangs", OutageWithinBudget, false),
		outage(StoreRedis, netns.Reject, "refuses", OutageWithinBudget, false),
		outage(StoreEtcd, netns.Reject, "refuses", OutagePastBudget, false),
		outage(StoreRedis, netns.Drop, "hangs", OutagePastBudget, false),
		outage(StoreEtcd, netns.Reject, "refuses", OutageWithinBudget, true),
		outage(StoreRedis, netns.Drop, "hangs", OutageWithinBudget, true),
		outage(StoreEtcd, netns.Drop, "hangs", OutagePastBudget, true),
		outage(StoreRedis, netns.Reject, "refuses", OutagePastBudget, true),
		outage(StoreZK, netns.Drop, "hangs", OutageWithinBudget, true),
		outage(StoreZK, netns.Reject, "refuses", OutagePastBudget, true),
		{Name: "loss", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i, pct := node(r), 20+r.IntN(21)
			return Fault{Name: fmt.Sprintf("n%d loses %d%% of packets", i+1, pct), For: brief(r), Action: Loss(i, pct)}
		}},
		{Name: "delay", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i, d := node(r), time.Duration(200+r.IntN(601))*time.Millisecond
			return Fault{Name: fmt.Sprintf("n%d delays its packets by %s", i+1, d), For: brief(r), Action: Delay(i, d)}
		}},
		{Name: "kill-etcd-leader", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "etcd leader killed", For: brief(r), Action: KillEtcdLeader()}
		}},
		{Name: "kill-zk-leader", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "zookeeper leader killed", For: brief(r), Action: KillZK(true, 0)}
		}},
		{Name: "kill-zk-member", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "zookeeper follower killed", For: brief(r), Action: KillZK(false, r.IntN(2))}
		}},
		{Name: "pg-failover", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "postgres primary killed, standby promoted", For: brief(r), Action: PGFailover()}
		}},
		{Name: "redis-failover", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "redis SENTINEL FAILOVER", For: brief(r), Action: RedisFailover()}
		}},
		{Name: "kill-redis-primary", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "redis primary killed", For: brief(r), Action: KillRedisPrimary()}
		}},
		{Name: "sigkill-node", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGKILL", i+1), For: brief(r), Action: KillNode(i)}
		}},
		{Name: "sigstop-node", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGSTOP", i+1), For: brief(r), Action: PauseNode(i)}
		}},
		{Name: "sigstop-takeover", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			// The taker starts TTL + 1 s into the pause (its lease must have
			// expired) and issues for a few seconds while the node is awake again.
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGSTOP, its etcd value taken over", i+1), For: ttl + 4*time.Second + time.Duration(r.Int64N(int64(2*time.Second))), Action: PauseTakeover(i)}
		}},
		{Name: "skew-ahead", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d restarted 30s ahead", i+1), For: brief(r), Action: SkewNode(i, 30*time.Second)}
		}},
		{Name: "skew-behind", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d restarted 30s behind", i+1), For: brief(r), Action: SkewNode(i, -30*time.Second)}
		}},
		{Name: "rolling-restart", Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "rolling restart n1 n2 n3", For: time.Second, Action: RollingRestart()}
		}},
	}, operationsCatalog()...)
}

// KindNames lists the catalog's kind names.
func KindNames() []string {
	var s []string
	for _, k := range Catalog() {
		s = append(s, k.Name)
	}
	return s
}

// DefaultKinds lists the kinds of the default schedule: the catalog without its
// Extra kinds.
func DefaultKinds() []string {
	var s []string
	for _, k := range Catalog() {
		if !k.Extra {
			s = append(s, k.Name)
		}
	}
	return s
}

// Plan makes a scenario from the seed: the named kinds (DefaultKinds when none; the
// name OperationsGroup stands for every kind of OperationsKinds), shuffled by the
// seed unless keepOrder, one after the other with gap between them. DefaultGroup
// stands for DefaultKinds, so that "default,operations" is the default schedule
// with the operations nemesis.
// ttl is the lease TTL the nodes run with (Cluster.TTL, or LeaseTTL of the options).
func Plan(name string, seed uint64, ttl, gap time.Duration, keepOrder bool, kinds ...string) (Scenario, error) {
	r := rand.New(rand.NewPCG(seed, 0x666c75727279))
	cat := Catalog()
	if len(kinds) == 0 {
		kinds = DefaultKinds()
	}
	var picked []Kind
	var names []string
	for _, k := range kinds {
		switch k {
		case OperationsGroup:
			names = append(names, OperationsKinds()...)
		case DefaultGroup:
			names = append(names, DefaultKinds()...)
		default:
			names = append(names, k)
		}
	}
	for _, k := range names {
		i := slices.IndexFunc(cat, func(c Kind) bool { return c.Name == k })
		if i < 0 {
			return Scenario{}, fmt.Errorf("harness: unknown fault kind %q; kinds: %s (groups: %s, %s)", k, strings.Join(KindNames(), ", "), DefaultGroup, OperationsGroup)
		}
		picked = append(picked, cat[i])
	}
	if !keepOrder {
		r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	}
	sc := Scenario{Name: name, Seed: seed, Lead: gap, Tail: gap, Gap: gap}
	at := time.Duration(0)
	for _, k := range picked {
		f := k.Make(r, ttl)
		f.Kind, f.At = k.Name, at
		sc.Faults = append(sc.Faults, f)
		at += f.For + gap
	}
	return sc, nil
}

// Describe lists the schedule, one fault a line.
func (s Scenario) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s, seed %d:\n", s.Name, s.Seed)
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "  +%-8s for %-7s %-18s %s\n", f.At.Round(time.Second/10), f.For.Round(time.Second/10), f.Kind, f.Name)
	}
	return b.String()
}

// Outcome is what a run produced.
type Outcome struct {
	Checker  *checker.Checker
	Windows  []checker.Window
	Result   checker.Result
	Faults   []FaultRun
	Requests int64
	// Problems are failures of the run outside the checker's scope (a node that
	// died by itself).
	Problems []string
	// Refusals are the spans in which one node answered a namespace's requests
	// only with 503 (it stopped by itself: fencing, clock behind, no range), 1 s or
	// longer, in time order.
	Refusals []Refusal
	// Calls sums the Go-client workload's Next calls per namespace (nil when it
	// did not run).
	Calls map[string]*Calls
	// Restarts are the node restarts of the schedule, each namespace's time to its
	// first ID, in time order.
	Restarts []RestartTime
	// TTL and Budget are the lease TTL and outage budget the snowflake namespaces
	// ran with (flurry's defaults unless the options set them).
	TTL, Budget time.Duration

	raw   []opMark     // the raw workload's ops
	calls []call       // the Go-client workload's ops
	logs  []logRefusal // refusals the nodes logged
}

// Refusal is a span in which one node refused one namespace's requests (503): from
// its first 503 after an answer to the sending of its next answered request (or its
// last 503 when none followed).
type Refusal struct {
	Namespace, Node string
	From, To        time.Time
	// Reason is the class of the first 503.
	Reason string
}

// refusals finds the spans of 503-only answers per namespace and node.
func refusals(ops []opMark, min time.Duration) []Refusal {
	slices.SortFunc(ops, func(a, b opMark) int { return a.start.Compare(b.start) })
	type key struct{ ns, node string }
	open := map[key]*Refusal{}
	var out []Refusal
	for _, o := range ops {
		k := key{o.ns, o.node}
		r := open[k]
		switch {
		case o.refused && r == nil:
			open[k] = &Refusal{Namespace: o.ns, Node: o.node, From: o.start, To: o.end, Reason: o.err}
		case o.refused:
			r.To = o.end
		case o.answered && r != nil:
			r.To = o.start
			if r.To.Sub(r.From) >= min {
				out = append(out, *r)
			}
			delete(open, k)
		}
	}
	for _, r := range open {
		if r.To.Sub(r.From) >= min {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b Refusal) int { return a.From.Compare(b.From) })
	return out
}

// opMark is what refusals needs of an op.
type opMark struct {
	ns, node, err     string
	start, end        time.Time
	refused, answered bool
}

// FaultRun is one fault as it happened.
type FaultRun struct {
	Fault      Fault
	Start, End time.Time
	Err        error // an error of the harness applying it
}

// Namespaces are the checker's descriptions of the nodes' namespaces. Nothing in
// them depends on the lease TTL.
func Namespaces() []checker.Namespace {
	l, err := layout.Parse(DefaultLayout)
	if err != nil {
		panic(err) // a constant
	}

	// A node restarted 30 s ahead issues IDs 30 s in the future: allow that.
	return []checker.Namespace{
		{Name: NSEtcd, Kind: checker.Snowflake, Layout: l, MaxAhead: time.Minute},
		{Name: NSRedis, Kind: checker.Snowflake, Layout: l, MaxAhead: time.Minute},
		{Name: NSSegment, Kind: checker.Segment},
		{Name: NSRedisGen, Kind: checker.Redis, Layout: l, MaxAhead: time.Minute},
		{Name: NSZK, Kind: checker.Snowflake, Layout: l, MaxAhead: time.Minute},
	}
}

// operationsNamespaces are the checker's descriptions of the namespaces that only
// the operations nemesis's processes serve; a run checks them when its schedule
// holds an operations kind.
func operationsNamespaces() []checker.Namespace {
	l, err := layout.Parse(DefaultLayout)
	if err != nil {
		panic(err) // a constant
	}
	leaf, err := layout.Parse("leaf")
	if err != nil {
		panic(err) // a preset
	}
	return []checker.Namespace{
		{Name: NSPrivate, Kind: checker.Snowflake, Layout: l, MaxAhead: time.Minute},
		// flurry starts a worker ID taken from Leaf up to margin (10 s) ahead.
		{Name: NSLeaf, Kind: checker.Snowflake, Layout: leaf, MaxAhead: time.Minute},
	}
}

// DefaultLayout is the snowflake namespaces' layout (flurry's default).
const DefaultLayout = "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16"

// Run runs the scenario on a started cluster: both workloads on every client host
// for the whole schedule, the faults at their times (each in its own goroutine;
// Begin and End errors are recorded, not fatal), a probe of every restarted node,
// then reads every op into a checker and checks.
// Every loop is bounded: the clients by time and count, each fault by its duration,
// each probe by the lease TTL plus half a minute.
func Run(ctx context.Context, c *Cluster, sc Scenario) (*Outcome, error) {
	ld := sc.Load.withDefaults()
	total := sc.announce(&c.progress)

	nodes := nodeList(c.Nodes)
	var hosts []clientHost
	for i, h := range c.ClientHosts {
		hosts = append(hosts, clientHost{name: fmt.Sprintf("c%d", i+1), host: h, seed: sc.Seed + uint64(i), ns: allNamespaces(),
			raw: nodes, goNodes: nodes})
	}
	files, err := startClients(hosts, ld, total, c.opt.Client, c.Dir, func(name string, h *netns.Host, args ...string) *Proc {
		return c.proc(name, h, nil, args...)
	})
	if err != nil {
		return nil, err
	}

	var restartsMu sync.Mutex
	var restarts []checker.Restart
	var extra []checker.Op
	addOp := func(op checker.Op) {
		restartsMu.Lock()
		extra = append(extra, op)
		restartsMu.Unlock()
	}
	probeCtx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	env := &Env{C: c, restarts: func(n string, at time.Time) {
		restartsMu.Lock()
		restarts = append(restarts, checker.Restart{Node: n, At: at})
		restartsMu.Unlock()
	}, ops: addOp, probe: &prober{c: c, ctx: probeCtx, limit: c.TTL() + 30*time.Second, ops: addOp}}
	runs := runFaults(ctx, sc, env, c.logf)
	if ctx.Err() == nil {
		// The tail: load on the repaired cluster.
		sleepUntil(ctx, time.Now().Add(sc.Tail))
	}
	var problems []string
	for _, n := range c.Nodes {
		if !n.Proc.Running() {
			problems = append(problems, fmt.Sprintf("node %s is not running at the end of the run (%v); see %s", n.Name, n.Proc.ExitErr(), n.Proc.Log))
		}
	}
	for _, f := range files {
		if err := f.proc.Stop(30 * time.Second); err != nil {
			return nil, err
		}
	}
	// A restart still not answering at the end is recorded as such.
	stopProbes()
	restartTimes := env.probe.wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	nss := Namespaces()
	if slices.ContainsFunc(sc.Faults, func(f Fault) bool { return slices.Contains(OperationsKinds(), f.Kind) }) {
		nss = append(nss, operationsNamespaces()...)
	}
	ck := checker.New(nss)
	for _, r := range restarts {
		ck.Restarted(r)
	}
	out := &Outcome{Checker: ck, Faults: runs, Problems: problems, Restarts: restartTimes, TTL: c.TTL(), Budget: c.Budget()}
	restartsMu.Lock()
	for _, op := range extra {
		if !op.NoAvailability {
			out.Requests++
		}
		ck.Add(op)
	}
	restartsMu.Unlock()
	untraced, err := readOps(files, ck, out)
	if err != nil {
		return nil, err
	}
	if untraced > 0 {
		problems = append(problems, fmt.Sprintf("the Go-client workload got %d IDs that no batch it saw held (node %q): "+
			"they are checked for duplicates and range but not for order", untraced, oplog.Untraced))
		out.Problems = problems
	}
	if ld.Clients > 0 {
		out.Calls = sumCalls(out.calls)
	}
	out.Windows = faultWindows(runs)
	out.Refusals = refusals(slices.Clone(out.raw), time.Second)
	out.logs = c.nodeRefusals()
	out.Result = ck.Check(out.Windows)
	return out, nil
}

// announce logs the schedule and how long its load lasts, and returns that:
// the lead, the faults as planned, the tail.
func (sc Scenario) announce(log *progress) time.Duration {
	var end time.Duration
	for _, f := range sc.Faults {
		end = max(end, f.At+f.For)
	}
	total := sc.Lead + end + sc.Tail
	log.logf("%s", strings.TrimSpace(sc.Describe()))
	log.logf("load for %s (and as long as the faults take to apply)", total.Round(time.Second))
	return total
}

// faultWindows are the checker's windows of the faults that ran.
func faultWindows(runs []FaultRun) []checker.Window {
	var ws []checker.Window
	for _, fr := range runs {
		if !fr.Start.IsZero() {
			ws = append(ws, checker.Window{Name: fr.Fault.Name, Start: fr.Start, End: fr.End})
		}
	}
	return ws
}

// runFaults applies the schedule's faults one after the other, each at its time
// or Gap after the previous one really ended, and returns them as they ran.
// Both schedules run their faults through it.
func runFaults(ctx context.Context, sc Scenario, env *Env, logf func(string, ...any)) []FaultRun {
	begin := time.Now().Add(sc.Lead)
	runs := make([]FaultRun, len(sc.Faults))
	next := begin
	for i, f := range sc.Faults {
		if at := begin.Add(f.At); at.After(next) {
			next = at
		}
		if !sleepUntil(ctx, next) {
			break
		}
		fr := &runs[i]
		fr.Fault, fr.Start = f, time.Now()
		logf("fault begins: %s", f.Name)
		if err := f.Action.Begin(ctx, env); err != nil {
			fr.Err = fmt.Errorf("begin: %w", err)
			logf("fault %s: %v", f.Name, fr.Err)
		}
		sleepUntil(ctx, fr.Start.Add(f.For))
		// Repair even when the context ended: the system is left as found.
		if err := f.Action.End(context.WithoutCancel(ctx), env); err != nil {
			fr.Err = errors.Join(fr.Err, fmt.Errorf("end: %w", err))
			logf("fault %s: %v", f.Name, err)
		}
		fr.End = time.Now()
		logf("fault ends: %s (%.1fs)", f.Name, fr.End.Sub(fr.Start).Seconds())
		next = fr.End.Add(sc.Gap)
	}
	return runs
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
