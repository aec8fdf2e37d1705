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

	"github.com/flurryid/flurry/verify/netns"
)

// RegionsGroup names the regions schedule in Plan-style kind lists: every kind of
// RegionKinds, on the two-region system (StartRegions, RunRegions).
const RegionsGroup = "regions"

// The regions schedule's kinds.
const (
	KindRegionCut       = "region-cut"
	KindRegionStoreDown = "region-store-down"
	KindRegionDown      = "region-down"
	KindRegionClockBack = "region-clock-behind"
	// KindRegionIsolated cuts one region's servers off the other region and its
	// clients, not its own clients (RegionIsolated).
	KindRegionIsolated   = "region-isolated"
	regionClockBehindBy  = 30 * time.Second
	regionPastBudgetMore = 5 * time.Second
)

// RegionKinds lists the regions schedule's kinds in catalog order.
func RegionKinds() []string {
	return []string{KindRegionCut, KindRegionIsolated, KindRegionStoreDown, KindRegionDown, KindRegionClockBack}
}

// PastBudget is how long the regions schedule's long faults last: the outage
// budget and a quarter of it more (at least 5 s more), so that a lease that
// depended on the missing link or store would have run out.
func PastBudget(budget time.Duration) time.Duration {
	return budget + max(budget/4, regionPastBudgetMore)
}

// regionsCatalog is the regions schedule's kinds; budget is the outage budget the
// nodes run with.
func regionsCatalog(budget time.Duration) []Kind {
	region := func(r *rand.Rand) int { return r.IntN(2) }
	name := func(i int) string { return []string{"a", "b"}[i] }
	return []Kind{
		{Name: KindRegionCut, Make: func(r *rand.Rand, _ time.Duration) Fault {
			d := PastBudget(budget)
			return Fault{Name: fmt.Sprintf("regions cut apart for %s", d.Round(time.Second)), For: d, Action: RegionCut()}
		}},
		{Name: KindRegionIsolated, Make: func(r *rand.Rand, _ time.Duration) Fault {
			i, d := region(r), PastBudget(budget)
			return Fault{Name: fmt.Sprintf("region %s cut off for %s (its own clients still reach it)", name(i), d.Round(time.Second)),
				For: d, Action: RegionIsolated(i)}
		}},
		{Name: KindRegionStoreDown, Make: func(r *rand.Rand, _ time.Duration) Fault {
			i, d := region(r), PastBudget(budget)
			return Fault{Name: fmt.Sprintf("region %s's etcd (3 members) SIGKILL for %s", name(i), d.Round(time.Second)), For: d, Action: RegionStoreDown(i)}
		}},
		{Name: KindRegionDown, Make: func(r *rand.Rand, _ time.Duration) Fault {
			i := region(r)
			d := 10*time.Second + time.Duration(r.Int64N(int64(5*time.Second)))
			return Fault{Name: fmt.Sprintf("region %s's 3 nodes SIGKILL", name(i)), For: d, Action: RegionDown(i)}
		}},
		{Name: KindRegionClockBack, Make: func(r *rand.Rand, _ time.Duration) Fault {
			i := region(r)
			d := 10*time.Second + time.Duration(r.Int64N(int64(5*time.Second)))
			return Fault{Name: fmt.Sprintf("region %s restarted %s behind", name(i), regionClockBehindBy), For: d, Action: RegionClockBehind(i, regionClockBehindBy)}
		}},
	}
}

// IsRegions reports whether a kind list asks for the regions schedule: every kind
// is a region kind or RegionsGroup. A list mixing them with the one-region kinds
// is an error of PlanRegions and of Plan.
func IsRegions(kinds []string) bool {
	if len(kinds) == 0 {
		return false
	}
	for _, k := range kinds {
		if k != RegionsGroup && !slices.Contains(RegionKinds(), k) {
			return false
		}
	}
	return true
}

// PlanRegions makes the regions schedule from the seed: the named kinds (all of
// RegionKinds when none, or RegionsGroup), shuffled by the seed unless keepOrder,
// gap apart; the seed also picks the region of each fault. budget is NSRegion's
// outage budget (Regions.Budget): the cut and the store outage last PastBudget.
func PlanRegions(name string, seed uint64, budget, gap time.Duration, keepOrder bool, kinds ...string) (Scenario, error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	r := rand.New(rand.NewPCG(seed, 0x72656769))
	cat := regionsCatalog(budget)
	var names []string
	for _, k := range kinds {
		if k == RegionsGroup {
			names = append(names, RegionKinds()...)
		} else {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		names = RegionKinds()
	}
	var picked []Kind
	for _, k := range names {
		i := slices.IndexFunc(cat, func(c Kind) bool { return c.Name == k })
		if i < 0 {
			return Scenario{}, fmt.Errorf("harness: %q is not a regions fault kind; kinds: %s (group %s)", k, strings.Join(RegionKinds(), ", "), RegionsGroup)
		}
		picked = append(picked, cat[i])
	}
	if !keepOrder {
		r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	}
	sc := Scenario{Name: name, Seed: seed, Lead: gap, Tail: gap, Gap: gap}
	at := time.Duration(0)
	for _, k := range picked {
		f := k.Make(r, 0)
		f.Kind, f.At = k.Name, at
		sc.Faults = append(sc.Faults, f)
		at += f.For + gap
	}
	return sc, nil
}

// ---- the actions

// targetRegion is the name of the region a regions fault acts on: "" for a fault
// on both (the cut) or not of the regions schedule.
func targetRegion(f Fault) string {
	if a, ok := f.Action.(interface{ target() int }); ok {
		return []string{"a", "b"}[a.target()]
	}
	return ""
}

// RegionCut drops every packet between the two regions, both ways (an nftables
// drop on each host of region a for each host of region b). Inside each region
// nothing changes.
func RegionCut() Action { return regionCut{} }

type regionCut struct{}

const regionCutRules = "region-cut"

func (regionCut) Begin(ctx context.Context, e *Env) error {
	a, b := e.R.Regions[0], e.R.Regions[1]
	var rules []netns.Rule
	for _, h := range b.Hosts() {
		rules = append(rules, netns.Rule{Peer: h.Addr, Action: netns.Drop})
	}
	for _, h := range a.Hosts() {
		if err := h.Block(ctx, regionCutRules, rules...); err != nil {
			return err
		}
	}
	return nil
}

func (regionCut) End(ctx context.Context, e *Env) error {
	var errs []error
	for _, h := range e.R.Regions[0].Hosts() {
		errs = append(errs, h.Unblock(ctx, regionCutRules))
	}
	return errors.Join(errs...)
}

// RegionIsolated cuts region i (0 is a, 1 is b) off by the network: its nodes and
// etcd members lose every host of the other region (its etcd, its nodes, its
// client host), an nftables drop on each of region i's servers for each of those
// hosts, both ways. Region i's client host is not cut: it still reaches its
// region's nodes, and the other region's too. Inside each region nothing changes.
func RegionIsolated(i int) Action { return regionIsolated{i} }

type regionIsolated struct{ i int }

func (a regionIsolated) target() int { return a.i }

const regionIsolatedRules = "region-isolated"

// servers are region r's etcd and node hosts: the region without its client host.
func (r *Region) servers() []*netns.Host {
	return append(append([]*netns.Host{}, r.EtcdHosts...), r.NodeHosts...)
}

func (a regionIsolated) Begin(ctx context.Context, e *Env) error {
	r := e.R.Regions[a.i]
	var rules []netns.Rule
	for _, h := range e.R.Other(r).Hosts() {
		rules = append(rules, netns.Rule{Peer: h.Addr, Action: netns.Drop})
	}
	for _, h := range r.servers() {
		if err := h.Block(ctx, regionIsolatedRules, rules...); err != nil {
			return err
		}
	}
	return a.cutAsPlanned(ctx, r, e.R.Other(r))
}

// cutAsPlanned checks the cut from both client hosts: the other region's cannot
// connect to the region's first node, the region's own can, and the region's own
// also reaches the other region's first node (it is not cut, unlike in
// RegionCut). A rule missing or too wide is an error of the fault.
func (a regionIsolated) cutAsPlanned(ctx context.Context, r, other *Region) error {
	dial := func(from *netns.Host, to *netns.Host, within time.Duration) error {
		cctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		conn, err := from.DialContext(cctx, "tcp", hostPort(to, FlurryPort))
		if err == nil {
			conn.Close()
		}
		return err
	}
	if dial(other.ClientHost, r.NodeHosts[0], time.Second) == nil {
		return fmt.Errorf("region %s's client host still reaches %s through the cut", other.Name, r.NodeHosts[0].Name)
	}
	if err := dial(r.ClientHost, r.NodeHosts[0], 3*time.Second); err != nil {
		return fmt.Errorf("region %s's own client host cannot reach %s: %w", r.Name, r.NodeHosts[0].Name, err)
	}
	if err := dial(r.ClientHost, other.NodeHosts[0], 3*time.Second); err != nil {
		return fmt.Errorf("region %s's client host cannot reach the other region's %s: %w", r.Name, other.NodeHosts[0].Name, err)
	}
	return nil
}

func (a regionIsolated) End(ctx context.Context, e *Env) error {
	var errs []error
	for _, h := range e.R.Regions[a.i].servers() {
		errs = append(errs, h.Unblock(ctx, regionIsolatedRules))
	}
	return errors.Join(errs...)
}

// RegionStoreDown SIGKILLs every etcd member of region i (0 is a, 1 is b); End
// starts them again on their data.
func RegionStoreDown(i int) Action { return regionStoreDown{i} }

type regionStoreDown struct{ i int }

func (a regionStoreDown) target() int { return a.i }

func (a regionStoreDown) Begin(ctx context.Context, e *Env) error {
	var errs []error
	for _, p := range e.R.Regions[a.i].Etcd {
		errs = append(errs, p.Kill())
	}
	return errors.Join(errs...)
}

func (a regionStoreDown) End(ctx context.Context, e *Env) error {
	return e.R.restartEtcd(ctx, e.R.Regions[a.i])
}

// RegionDown SIGKILLs the three nodes of region i; End starts them again.
func RegionDown(i int) Action { return regionDown{i} }

type regionDown struct{ i int }

func (a regionDown) target() int { return a.i }

func (a regionDown) Begin(ctx context.Context, e *Env) error {
	var errs []error
	for _, n := range e.R.Regions[a.i].Nodes {
		errs = append(errs, n.Proc.Kill())
	}
	return errors.Join(errs...)
}

func (a regionDown) End(ctx context.Context, e *Env) error {
	return e.restartRegion(ctx, e.R.Regions[a.i], false, 0)
}

// RegionClockBehind restarts the three nodes of region i (SIGTERM) with their
// clocks skew behind (FLURRY_CLOCK_SKEW); End restarts them on the true clock.
func RegionClockBehind(i int, skew time.Duration) Action { return regionClock{i, skew} }

type regionClock struct {
	i    int
	skew time.Duration
}

func (a regionClock) target() int { return a.i }

func (a regionClock) Begin(ctx context.Context, e *Env) error {
	return e.restartRegion(ctx, e.R.Regions[a.i], true, -a.skew)
}

func (a regionClock) End(ctx context.Context, e *Env) error {
	return e.restartRegion(ctx, e.R.Regions[a.i], true, 0)
}

// restartRegion restarts every node of region r at once: stopped first when stop
// (SIGTERM; else they are already down), started with a clock skew, each restart
// recorded for the checker; it waits until each is ready. A node that runs but is
// not ready in a minute is the availability figures' business, not an error.
func (e *Env) restartRegion(ctx context.Context, r *Region, stop bool, skew time.Duration) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.Nodes))
	for i, n := range r.Nodes {
		wg.Go(func() {
			if stop {
				if err := n.Proc.Stop(10 * time.Second); err != nil {
					errs[i] = err
					return
				}
			}
			if err := n.launch(skew, &e.R.progress); err != nil {
				errs[i] = err
				return
			}
			e.restarts(n.Name, n.Proc.StartedAt())
			if err := n.waitReady(ctx, r.ClientHost, time.Minute); err != nil {
				if n.Proc.Running() {
					e.R.logf("node %s: %v", n.Name, err)
					return
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
