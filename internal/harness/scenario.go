package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/internal/checker"
	"github.com/flurryid/flurry/internal/harness/oplog"
	"github.com/flurryid/flurry/internal/netns"
	"github.com/flurryid/flurry/layout"
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

// Load is the clients' work.
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
}

// Kind is a catalog entry: a family of faults whose parameters (which node, which
// store, how long) the seed picks.
type Kind struct {
	Name string
	// Make draws one fault of the kind; ttl is the lease TTL (faults that must
	// outlast it do).
	Make func(r *rand.Rand, ttl time.Duration) Fault
}

func node(r *rand.Rand) int { return r.IntN(3) }

// longer draws a duration from ttl+1s to ttl+4s: longer than a lease lives.
func longer(r *rand.Rand, ttl time.Duration) time.Duration {
	return ttl + time.Second + time.Duration(r.Int64N(int64(3*time.Second)))
}

// Catalog is every fault kind the harness knows, in a fixed order.
func Catalog() []Kind {
	store := func(s Store, how netns.Action, verb string) Kind {
		return Kind{Name: verb + "-" + string(s), Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: fmt.Sprintf("%s %s (all nodes)", string(s), verb), For: longer(r, ttl), Action: StoreDown(s, how)}
		}}
	}
	return []Kind{
		{"partition-stores", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d cut off the stores", i+1), For: longer(r, ttl), Action: PartitionStores(i)}
		}},
		{"partition-clients", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d cut off the clients", i+1), For: longer(r, ttl), Action: PartitionClients(i)}
		}},
		store(StoreEtcd, netns.Drop, "hangs"),
		store(StoreEtcd, netns.Reject, "refuses"),
		store(StoreRedis, netns.Drop, "hangs"),
		store(StoreRedis, netns.Reject, "refuses"),
		store(StorePG, netns.Drop, "hangs"),
		store(StorePG, netns.Reject, "refuses"),
		{"loss", func(r *rand.Rand, ttl time.Duration) Fault {
			i, pct := node(r), 20+r.IntN(21)
			return Fault{Name: fmt.Sprintf("n%d loses %d%% of packets", i+1, pct), For: longer(r, ttl), Action: Loss(i, pct)}
		}},
		{"delay", func(r *rand.Rand, ttl time.Duration) Fault {
			i, d := node(r), time.Duration(200+r.IntN(601))*time.Millisecond
			return Fault{Name: fmt.Sprintf("n%d delays its packets by %s", i+1, d), For: longer(r, ttl), Action: Delay(i, d)}
		}},
		{"kill-etcd-leader", func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "etcd leader killed", For: longer(r, ttl), Action: KillEtcdLeader()}
		}},
		{"pg-failover", func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "postgres primary killed, standby promoted", For: longer(r, ttl), Action: PGFailover()}
		}},
		{"redis-failover", func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "redis SENTINEL FAILOVER", For: longer(r, ttl), Action: RedisFailover()}
		}},
		{"kill-redis-primary", func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "redis primary killed", For: longer(r, ttl), Action: KillRedisPrimary()}
		}},
		{"sigkill-node", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGKILL", i+1), For: longer(r, ttl), Action: KillNode(i)}
		}},
		{"sigstop-node", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGSTOP", i+1), For: longer(r, ttl), Action: PauseNode(i)}
		}},
		{"sigstop-takeover", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGSTOP, its etcd value taken over", i+1), For: ttl + 4*time.Second + time.Duration(r.Int64N(int64(2*time.Second))), Action: PauseTakeover(i)}
		}},
		{"skew-ahead", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d restarted 30s ahead", i+1), For: longer(r, ttl), Action: SkewNode(i, 30*time.Second)}
		}},
		{"skew-behind", func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d restarted 30s behind", i+1), For: longer(r, ttl), Action: SkewNode(i, -30*time.Second)}
		}},
		{"rolling-restart", func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "rolling restart n1 n2 n3", For: time.Second, Action: RollingRestart()}
		}},
	}
}

// KindNames lists the catalog's kind names.
func KindNames() []string {
	var s []string
	for _, k := range Catalog() {
		s = append(s, k.Name)
	}
	return s
}

// Plan makes a scenario from the seed: the named kinds (every kind when none),
// shuffled by the seed unless keepOrder, one after the other with gap between them.
func Plan(name string, seed uint64, ttl, gap time.Duration, keepOrder bool, kinds ...string) (Scenario, error) {
	r := rand.New(rand.NewPCG(seed, 0x666c75727279))
	cat := Catalog()
	if len(kinds) == 0 {
		kinds = KindNames()
	}
	var picked []Kind
	for _, k := range kinds {
		i := slices.IndexFunc(cat, func(c Kind) bool { return c.Name == k })
		if i < 0 {
			return Scenario{}, fmt.Errorf("harness: unknown fault kind %q; kinds: %s", k, strings.Join(KindNames(), ", "))
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
		fmt.Fprintf(&b, "  +%-6s for %-5s %-18s %s\n", f.At.Round(time.Second/10), f.For.Round(time.Second/10), f.Kind, f.Name)
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

// Namespaces are the checker's descriptions of the nodes' namespaces.
func Namespaces(ttl time.Duration) []checker.Namespace {
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
	}
}

// DefaultLayout is the snowflake namespaces' layout (flurry's default).
const DefaultLayout = "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16"

// Run runs the scenario on a started cluster: clients on every client host for the
// whole schedule, the faults at their times (each in its own goroutine; Begin and
// End errors are recorded, not fatal), then reads every op into a checker and checks.
// Every loop is bounded: the clients by time and count, each fault by its duration.
func Run(ctx context.Context, c *Cluster, sc Scenario) (*Outcome, error) {
	ld := sc.Load
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
	var end time.Duration
	for _, f := range sc.Faults {
		end = max(end, f.At+f.For)
	}
	total := sc.Lead + end + sc.Tail
	c.logf("%s", strings.TrimSpace(sc.Describe()))
	c.logf("load for %s (and as long as the faults take to apply)", total.Round(time.Second))

	var nodes []string
	for _, n := range c.Nodes {
		nodes = append(nodes, n.Name+"="+n.URL())
	}
	var clients []*Proc
	for i, h := range c.ClientHosts {
		name := fmt.Sprintf("c%d", i+1)
		p := c.proc("client-"+name, h, nil, c.opt.Client,
			"-name", name, "-seed", fmt.Sprint(sc.Seed+uint64(i)), "-nodes", strings.Join(nodes, ","), "-ns", strings.Join(allNamespaces(), ","),
			"-workers", fmt.Sprint(ld.Workers), "-count", fmt.Sprint(ld.Count), "-timeout", ld.Timeout.String(),
			"-duration", (total + 10*time.Minute).String(), "-max-requests", fmt.Sprint(ld.MaxRequests), "-rate", fmt.Sprint(ld.Rate),
			"-out", filepath.Join(c.Dir, "ops-"+name+".tsv"))
		if err := p.Start(); err != nil {
			return nil, err
		}
		clients = append(clients, p)
	}

	var restartsMu sync.Mutex
	var restarts []checker.Restart
	var extra []checker.Op
	env := &Env{C: c, restarts: func(n string, at time.Time) {
		restartsMu.Lock()
		restarts = append(restarts, checker.Restart{Node: n, At: at})
		restartsMu.Unlock()
	}, ops: func(op checker.Op) {
		restartsMu.Lock()
		extra = append(extra, op)
		restartsMu.Unlock()
	}}
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
		c.logf("fault begins: %s", f.Name)
		if err := f.Action.Begin(ctx, env); err != nil {
			fr.Err = fmt.Errorf("begin: %w", err)
			c.logf("fault %s: %v", f.Name, fr.Err)
		}
		sleepUntil(ctx, fr.Start.Add(f.For))
		// Repair even when the context ended: the cluster is left as found.
		if err := f.Action.End(context.WithoutCancel(ctx), env); err != nil {
			fr.Err = errors.Join(fr.Err, fmt.Errorf("end: %w", err))
			c.logf("fault %s: %v", f.Name, err)
		}
		fr.End = time.Now()
		c.logf("fault ends: %s (%.1fs)", f.Name, fr.End.Sub(fr.Start).Seconds())
		next = fr.End.Add(sc.Gap)
	}
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
	for _, p := range clients {
		if err := p.Stop(30 * time.Second); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	ck := checker.New(Namespaces(c.opt.LeaseTTL))
	for _, r := range restarts {
		ck.Restarted(r)
	}
	out := &Outcome{Checker: ck, Faults: runs, Problems: problems}
	var marks []opMark
	restartsMu.Lock()
	for _, op := range extra {
		out.Requests++
		ck.Add(op)
	}
	restartsMu.Unlock()
	for _, p := range clients {
		f, err := os.Open(filepath.Join(c.Dir, "ops-"+strings.TrimPrefix(p.Name, "client-")+".tsv"))
		if err != nil {
			return nil, fmt.Errorf("%s wrote no ops (log %s): %w", p.Name, p.Log, err)
		}
		err = oplog.Read(f, func(op checker.Op) {
			out.Requests++
			ck.Add(op)
			marks = append(marks, opMark{ns: op.Namespace, node: op.Node, err: op.Err, start: op.Start, end: op.End,
				refused: strings.HasPrefix(op.Err, "503"), answered: op.Err == ""})
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	for _, fr := range runs {
		if !fr.Start.IsZero() {
			out.Windows = append(out.Windows, checker.Window{Name: fr.Fault.Name, Start: fr.Start, End: fr.End})
		}
	}
	out.Refusals = refusals(marks, time.Second)
	out.Result = ck.Check(out.Windows)
	return out, nil
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
