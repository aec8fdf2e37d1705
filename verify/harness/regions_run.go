package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// MinCutAvailability is the least fraction of Next calls, and of raw requests to a
// region's own nodes, that each region must answer while the regions are cut
// apart or one region is cut off (KindRegionIsolated): a region whose lease store
// is its own never refuses because of a cut, and a region's clients that cannot
// reach the other region are answered by their own.
const MinCutAvailability = 0.999

// cutKind reports whether the cut check holds in a window of the kind: the
// regions cut apart, or a region cut off.
func cutKind(kind string) bool { return kind == KindRegionCut || kind == KindRegionIsolated }

// RegionsOutcome is what a run of the regions schedule produced: the checker's
// result over the IDs of both regions, and the availability of each region.
type RegionsOutcome struct {
	Outcome
	// Rows are each region's figures over the whole run (Window "") and in each
	// fault window, region a's first.
	Rows []RegionRow
	// RTT and Delay are the round trip measured between the regions and the
	// one-way delay set.
	RTT, Delay time.Duration
	// Datacenters are the regions' datacenter values, by region name.
	Datacenters map[string]int
}

// RegionRow is one region's figures in one span of the run.
type RegionRow struct {
	Region string
	// Window names the fault window ("" for the whole run); Kind is its kind.
	Window, Kind string
	// Calls are the region's Go-client Next calls begun in the span.
	Calls Calls
	// Remote counts the IDs of those calls that the other region's nodes issued.
	Remote int64
	// Requests and Answered count the raw requests to the region's own nodes.
	Requests, Answered int64
}

// RawAvailability is the fraction of the raw requests answered (1 when none).
func (r RegionRow) RawAvailability() float64 {
	if r.Requests == 0 {
		return 1
	}
	return float64(r.Answered) / float64(r.Requests)
}

// RunRegions runs the regions schedule on a started two-region system: on each
// region's client host the Go client (its region's servers first) and raw HTTP
// requests to its region's nodes, for the whole schedule; the faults at their
// times; then every ID of both regions into one checker. Every loop is bounded:
// the clients by time and count, each fault by its duration.
func RunRegions(ctx context.Context, s *Regions, sc Scenario) (*RegionsOutcome, error) {
	ld := sc.Load.withDefaults()
	total := sc.announce(&s.progress)

	var hosts []clientHost
	for i, r := range s.Regions {
		local := nodeList(r.Nodes)
		all := append(slices.Clone(local), nodeList(s.Other(r).Nodes)...)
		hosts = append(hosts, clientHost{name: r.Name + "c1", host: r.ClientHost, seed: sc.Seed + uint64(i), ns: []string{NSRegion},
			raw: local, goNodes: all, local: len(local)})
	}
	files, err := startClients(hosts, ld, total, s.opt.Client, s.Dir, s.proc)
	if err != nil {
		return nil, err
	}

	var mu sync.Mutex
	var restarts []checker.Restart
	env := &Env{R: s, restarts: func(n string, at time.Time) {
		mu.Lock()
		restarts = append(restarts, checker.Restart{Node: n, At: at})
		mu.Unlock()
	}, ops: func(checker.Op) {}}
	begin := time.Now()
	runs := runFaults(ctx, sc, env, s.logf)
	if ctx.Err() == nil {
		// The tail, and at least the lead when no fault ran.
		sleepUntil(ctx, time.Now().Add(sc.Tail))
		sleepUntil(ctx, begin.Add(sc.Lead))
	}
	var problems []string
	for _, r := range s.Regions {
		for _, n := range r.Nodes {
			if !n.Proc.Running() {
				problems = append(problems, fmt.Sprintf("node %s is not running at the end of the run (%v); see %s", n.Name, n.Proc.ExitErr(), n.Proc.Log))
			}
		}
	}
	for _, f := range files {
		if err := f.proc.Stop(30 * time.Second); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	ck := checker.New(RegionNamespaces())
	for _, r := range restarts {
		ck.Restarted(r)
	}
	out := &RegionsOutcome{Outcome: Outcome{Checker: ck, Faults: runs, TTL: s.TTL(), Budget: s.Budget()},
		RTT: s.RTT, Delay: s.opt.Delay, Datacenters: map[string]int{}}
	for _, r := range s.Regions {
		out.Datacenters[r.Name] = r.Datacenter
	}
	untraced, err := readOps(files, ck, &out.Outcome)
	if err != nil {
		return nil, err
	}
	if untraced > 0 {
		problems = append(problems, fmt.Sprintf("the Go-client workload got %d IDs that no batch it saw held: "+
			"they are checked for duplicates and range but not for order", untraced))
	}
	if ld.Clients > 0 {
		out.Calls = sumCalls(out.calls)
	}
	out.Windows = faultWindows(runs)
	out.Refusals = refusals(append([]opMark(nil), out.raw...), time.Second)
	out.Result = ck.Check(out.Windows)
	out.Rows = regionRows(out.calls, out.raw, runs, out.Result.Start, out.Result.End)
	out.Problems = append(problems, cutProblems(out.Rows, MinCutAvailability, ld.Clients > 0)...)
	return out, nil
}

// regionOf is the region of a client, caller or node name: its first letter
// (client host ac1, its callers ac1-go0.1, nodes an1..an3 are region a's).
func regionOf(name string) string {
	if name == "" {
		return ""
	}
	return name[:1]
}

// regionRows sums each region's Go-client calls and raw requests over the whole
// run [from, to] and in each fault window, by the time each began.
func regionRows(calls []call, raw []opMark, runs []FaultRun, from, to time.Time) []RegionRow {
	type span struct {
		name, kind string
		from, to   time.Time
	}
	spans := []span{{"", "", from, to}}
	for _, fr := range runs {
		if !fr.Start.IsZero() {
			spans = append(spans, span{fr.Fault.Name, fr.Fault.Kind, fr.Start, fr.End})
		}
	}
	var rows []RegionRow
	for _, sp := range spans {
		for _, reg := range []string{"a", "b"} {
			row := RegionRow{Region: reg, Window: sp.name, Kind: sp.kind}
			var in []call
			for _, c := range calls {
				if regionOf(c.caller) != reg || c.start.Before(sp.from) || c.start.After(sp.to) {
					continue
				}
				in = append(in, c)
				if c.err == "" && c.node != oplog.NoNode && !strings.HasPrefix(c.node, oplog.Untraced) && regionOf(c.node) != reg {
					row.Remote += int64(c.ids)
				}
			}
			if sum := sumCalls(in)[NSRegion]; sum != nil {
				row.Calls = *sum
			}
			for _, o := range raw {
				if regionOf(o.node) != reg || o.start.Before(sp.from) || o.start.After(sp.to) {
					continue
				}
				row.Requests++
				if o.answered {
					row.Answered++
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// cutProblems checks that each region answered at least min of its Go-client
// calls (when the Go client ran) and of its raw requests to its own nodes in
// every window in which the regions were cut apart or a region was cut off
// (cutKind), and that it was asked at all.
func cutProblems(rows []RegionRow, min float64, goClient bool) []string {
	var out []string
	for _, r := range rows {
		if !cutKind(r.Kind) {
			continue
		}
		if goClient {
			switch {
			case r.Calls.Calls == 0:
				out = append(out, fmt.Sprintf("region %s made no Go-client call during %q", r.Region, r.Window))
			case r.Calls.Availability() < min:
				out = append(out, fmt.Sprintf("region %s answered %.3f%% of its Go-client calls during %q, below %.1f%%: "+
					"the cut made it refuse (%d failed)", r.Region, 100*r.Calls.Availability(), r.Window, 100*min, r.Calls.Calls-r.Calls.Answered))
			}
		}
		switch {
		case r.Requests == 0:
			out = append(out, fmt.Sprintf("region %s made no raw request to its nodes during %q", r.Region, r.Window))
		case r.RawAvailability() < min:
			out = append(out, fmt.Sprintf("region %s's nodes answered %.3f%% of its raw requests during %q, below %.1f%%: "+
				"the cut made them refuse (%d failed)", r.Region, 100*r.RawAvailability(), r.Window, 100*min, r.Requests-r.Answered))
		}
	}
	return out
}
