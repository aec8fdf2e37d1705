package harness

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/plot"
)

// ReportInfo is what a report says about how its run was made.
type ReportInfo struct {
	// Command replays the run.
	Command string
	// Notes are extra paragraphs (the machine, what was left out and why).
	Notes []string
	// RedisURL is how the nodes reached Redis.
	RedisURL string
	// LeaseTTL, Window and Budget are the lease settings the options set (zero:
	// flurry's default, and the report says so).
	LeaseTTL, Window, Budget time.Duration
	Wall                     time.Duration
}

// Why a namespace stopping during a fault is the safe choice, for the pairs in which
// that does not depend on the outage budget.
const (
	segmentDown = "A segment node issues from the ranges it holds; when they are used up and " +
		"no store hands out a new range it refuses: a range not confirmed by the database may be handed to " +
		"another node. A longer `runway` keeps more IDs buffered for such an outage."
	redisGenDown = "redisgen makes every ID inside Redis (one Lua script reads TIME and the last tick): " +
		"with no writable Redis there is nothing to issue from, and no local state that could stand in without " +
		"risking an ID the next primary also hands out."
	clockBehind = "A node restarted with its clock behind must not issue IDs below those it issued before: " +
		"it refuses until its clock passes its high-water mark."
	budgetSpent = "The outage outlasted the outage budget (%s). Each node issued on its confirmed reservation " +
		"through the budget and stopped once it was spent, before its lease can expire in the store and its node " +
		"value go to another process: issuing on could give two live holders one value, which is how duplicates " +
		"happen. A node cannot tell a hung store from a partition in which another process already holds its " +
		"value. It resumes by itself when the store confirms a reservation again."
	budgetNotSpent = "Not expected: this fault kept the lease store from the node(s) for less than the outage budget " +
		"(%s), through which a snowflake namespace answers on its confirmed reservation. The causes in the " +
		"store-outage and refusal tables say what stopped it."
	clientWait = "Not a stop of flurry: the other nodes kept answering, but the raw clients whose requests " +
		"went to the unreachable node waited out their per-request timeout (2 s) before moving to the next node, " +
		"and at that moment every worker of the namespace was waiting there. Compare the Go client's longest " +
		"wait: a client that hedges (asks a second node after a short delay) does not see this gap."
)

// fenceWhy holds the reasons that do not depend on the outage budget, by fault
// kind and namespace.
var fenceWhy = map[string]string{
	"pg-failover/" + NSSegment: "Range fetches fail until the standby is promoted and the nodes reconnect to it; " +
		"a node whose buffered ranges run out first refuses rather than invent a range.",
	"partition-stores/" + NSSegment:    "The cut-off node issues from its buffered range, then refuses: it cannot get a range confirmed.",
	"kill-redis-primary/" + NSRedisGen: redisGenDown,
	"redis-failover/" + NSRedisGen:     redisGenDown,
	"skew-behind/" + NSEtcd:            clockBehind,
	"skew-behind/" + NSRedis:           clockBehind,
	"skew-behind/" + NSZK:              clockBehind,
	"skew-ahead/" + NSEtcd: "After running 30 s ahead, the node restarted on the true clock stands behind its own " +
		"mark: it waits (or takes another value) rather than issue below IDs it has issued.",
	"skew-ahead/" + NSRedis: "After running 30 s ahead, the node restarted on the true clock stands behind its own " +
		"mark: it waits (or takes another value) rather than issue below IDs it has issued.",
	"skew-ahead/" + NSZK: "After running 30 s ahead, the node restarted on the true clock stands behind its own " +
		"mark: it waits (or takes another value) rather than issue below IDs it has issued.",
	"sigstop-takeover/" + NSEtcd: "The paused node woke after another process had taken its node value: it must " +
		"not issue with that value again (it refuses until it holds a lease, another value). Its IDs and the " +
		"taker's are checked together (node \"takeover\" in the tables).",
}

// leaseStore is the store a namespace's IDs depend on.
func leaseStore(ns string) Store {
	switch ns {
	case NSEtcd:
		return StoreEtcd
	case NSRedis, NSRedisGen:
		return StoreRedis
	case NSSegment:
		return StorePG
	case NSZK:
		return StoreZK
	}
	return ""
}

func snowflakeNS(ns string) bool { return ns == NSEtcd || ns == NSRedis || ns == NSZK }

// cutsLease reports whether a fault of the kind keeps a snowflake namespace's nodes
// from its lease store (all of them or one) while it lasts.
func cutsLease(f Fault, ns string) bool {
	if sd, ok := f.Action.(storeDown); ok {
		return sd.s == leaseStore(ns)
	}
	switch f.Kind {
	case "partition-stores", "sigstop-node", "loss", "delay":
		return true
	case "kill-etcd-leader":
		return ns == NSEtcd
	case "kill-redis-primary", "redis-failover":
		return ns == NSRedis
	case "kill-zk-leader":
		return ns == NSZK
	}
	return false
}

// stopReason says why a gap in namespace ns during fault f is the safe choice, or
// that it is not expected, or that it is not flurry's stop at all; "" when no
// reason is known.
func stopReason(f Fault, ns string, budget time.Duration) string {
	if why, ok := fenceWhy[f.Kind+"/"+ns]; ok {
		return why
	}
	if sd, ok := f.Action.(storeDown); ok && sd.s == leaseStore(ns) {
		switch ns {
		case NSSegment:
			return segmentDown
		case NSRedisGen:
			return redisGenDown
		}
	}
	if snowflakeNS(ns) && cutsLease(f, ns) {
		if f.For < budget {
			return fmt.Sprintf(budgetNotSpent, budget)
		}
		return fmt.Sprintf(budgetSpent, budget)
	}
	switch f.Kind {
	case "sigstop-node", "sigstop-takeover", "partition-clients", "delay", "loss", "sigkill-node":
		return clientWait
	}
	return ""
}

// anomalyCause names the known flurry defect behind anomalies in a fault of the kind.
func anomalyCause(kind string, order bool) string {
	if order && (kind == "skew-behind" || kind == "skew-ahead") {
		return "A node restarted on a clock behind the IDs it issued before took a never-used node value " +
			"and issued below them: the same process restarting must continue above what its scope issued. " +
			"Check the examples: every one is \"across a restart of the node\"."
	}
	if c := operationsCause(kind); c != "" {
		if order && (kind == "revert-snapshot" || kind == "restore-backup") {
			c += " Order violations across the node's restart: it issued below the IDs it had issued before the restore " +
				"(its clock behind them); like any restart on a clock behind, it must continue above what its scope issued."
		}
		return c
	}
	return "unknown: a flurry bug to investigate (replay with the command above)"
}

// operationsCause names the failure mode behind duplicates in an operations kind
// ("" for another kind).
func operationsCause(kind string) string {
	switch kind {
	case "clone-crashed":
		return "Two processes resumed the lease of one journal (a copied data directory): a resume must win in the store " +
			"(retire the journal's token) so that the other process takes another node value or refuses."
	case "clone-running":
		return "A process resumed the lease of a journal copied from a running node, which still holds it: a resume must win " +
			"in the store, and the original stop issuing once its token is retired."
	case "restore-backup":
		return "A node resumed from a journal older than its store's record (restored from a copy) and trusted its old mark."
	case "revert-snapshot":
		return "A node reverted to a snapshot, clock and journal, issued again in the span it had issued in after the snapshot: " +
			"a journal behind the store must not be trusted, and the node must start above the store's reservation."
	case "second-deployment":
		return "Two servers issued with one fixed value on one scope: the second must find the value held and refuse."
	case "private-stores":
		return "Two servers on their own embedded lease stores took the same node value, and one client mixed them: " +
			"the client must refuse servers whose lease stores differ."
	case "silent-leaf":
		return "flurry took the worker ID of a Leaf server that stopped writing its node but still answers: " +
			"it must check that the registered address does not answer as a Leaf server."
	}
	return ""
}

// writeOperations writes the operations nemesis's section: each kind, what it does
// and which operator's action it stands for, and for each of its faults in this
// run how many IDs each of its processes answered and the duplicates in its window.
func writeOperations(b *strings.Builder, out *Outcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## The operations nemesis\n\n")
	p("What operators do to data directories, configurations and registries: the kinds below run with "+
		"`-kinds %s` (or each by name; `-kinds default,operations` adds them to the default schedule). flurry's promise "+
		"holds for an operator's action when its kind shows 0 duplicates; a duplicate's known cause is named under "+
		"\"Faults with anomalies\". Each fault starts processes of its own on two "+
		"spare hosts and runs a workload of its own on the last client host: raw HTTP batches of 1,000 (two Go clients for "+
		"private-stores) from the processes the fault can make collide. Every ID is recorded with the process that answered "+
		"it and checked with every other ID of its namespace, from the nodes, the copies and the main workloads alike; a "+
		"fault's duplicates are those whose later receipt falls in its window. Each fault is bounded (10 to 27 s) and removes "+
		"its processes and directories when it ends.\n\n", OperationsGroup)
	p("| kind | what the fault does | what an operator does that it stands for | in this run |\n|---|---|---|---|\n")
	for _, kind := range OperationsKinds() {
		does, mimics := opsKindDoc(kind)
		var got []string
		for _, fr := range out.Faults {
			if fr.Fault.Kind != kind || fr.Start.IsZero() {
				continue
			}
			got = append(got, opsResult(fr, out))
		}
		res := "not in this schedule"
		if len(got) > 0 {
			res = strings.Join(got, "<br>")
		}
		p("| %s | %s | %s | %s |\n", kind, does, mimics, res)
	}
}

// opsResult is one operations fault's line of the report: its duplicates and the
// IDs each of its processes answered.
func opsResult(fr FaultRun, out *Outcome) string {
	dups := int64(-1)
	for _, w := range out.Result.Windows {
		if w.Name == fr.Fault.Name {
			dups = w.Duplicates
		}
	}
	d := "duplicates unknown"
	switch {
	case dups == 0:
		d = "**0 duplicates**"
	case dups > 0:
		d = fmt.Sprintf("**%s duplicates**", commas(dups))
	}
	var per []string
	if of, ok := fr.Fault.Action.(opsFault); ok {
		ids := of.processIDs()
		var names []string
		for n := range ids {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			per = append(per, fmt.Sprintf("%s %s", n, commas(int64(ids[n]))))
		}
	}
	if len(per) == 0 {
		per = []string{"none answered"}
	}
	s := fmt.Sprintf("%s (IDs answered: %s)", d, strings.Join(per, ", "))
	if fr.Err != nil {
		s += "; harness error: " + strings.ReplaceAll(fr.Err.Error(), "|", "/")
	}
	return s
}

// leaseText says what lease settings the snowflake namespaces ran with.
func leaseText(info ReportInfo, out *Outcome) string {
	var set []string
	for _, kv := range []struct {
		key string
		d   time.Duration
	}{{"ttl", info.LeaseTTL}, {"window", info.Window}, {"budget", info.Budget}} {
		if kv.d > 0 {
			set = append(set, fmt.Sprintf("`%s: %s`", kv.key, kv.d))
		}
	}
	if len(set) == 0 {
		return fmt.Sprintf("The snowflake namespaces run with flurry's lease defaults: an outage budget of %s "+
			"(`snowflake.lease.budget`), the lease TTL derived from it (%s) and the default reservation window.",
			out.Budget, out.TTL)
	}
	return fmt.Sprintf("The snowflake namespaces' lease settings: %s (the rest flurry's defaults); outage budget %s, lease TTL %s.",
		strings.Join(set, ", "), out.Budget, out.TTL)
}

// WriteReport writes docs/reliability.md's content: how the run was made, the
// schedule, availability as the nodes and as the Go client's callers saw it, the
// store outages (when refusals began and why), the restarts (time to the first
// ID), where flurry stopped and why, and the checker's tables.
func WriteReport(w io.Writer, sc Scenario, out *Outcome, info ReportInfo) error {
	r := out.Result
	ld := sc.Load.withDefaults()
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	writeHead(&b, "flurry under network faults", "", r, info)
	p("Hosts are Linux network namespaces on one bridge (itself in a namespace; nothing in the root namespace, no route out): "+
		"a 3-member etcd cluster, Redis (primary, replica, 3 sentinels), a 3-member ZooKeeper ensemble, a PostgreSQL cluster started by the harness, "+
		"three `flurry serve` nodes, two client hosts and two spare hosts (for the processes of the operations nemesis, below). Each node serves `sfe` (snowflake, node value leased from etcd "+
		"through the endpoint list of all three members), `sfr` (snowflake, leased from Redis: %s), `rg` (redisgen: each ID made inside Redis by a Lua script, "+
		"same URL) and `seg` (segment "+
		"ranges from PostgreSQL: a primary and a streaming standby, reached by one multi-host URL with "+
		"`target_session_attrs=read-write`); `sfz` (snowflake, leased from a 3-member ZooKeeper ensemble through the list of "+
		"all three members). %s\n\n", info.RedisURL, leaseText(info, out))
	p("Each client host runs two workloads, and the checker (`verify/checker`) checks every ID of both together "+
		"(duplicates, per-node order, range). **Raw HTTP** measures the nodes: %d workers per namespace ask for batches of %d IDs "+
		"(`GET /v1/{ns}/next?count=N&format=text`) with a %s timeout, stay on a node while it answers and move to the "+
		"next one after an error. **The Go client** measures what an application sees: %d `client.Client`s per host, each "+
		"with the three nodes as servers and the documented defaults (adaptive batches and low-water mark, %s per "+
		"request, failover), and %d callers per namespace on each calling `Next` (%.0f calls a second per host, a "+
		"deadline of %s per call). Each ID a caller gets is traced to the node whose batch held it, for the order check.\n\n",
		ld.Workers, ld.Count, ld.Timeout, ld.Clients, client.DefaultTimeout, ld.Callers, ld.CallRate, ld.CallTimeout)
	writeNotes(&b, info)
	verdict := verdictText(r, "no duplicate")
	calls := ""
	if out.Calls != nil {
		var all Calls
		for _, c := range out.Calls {
			all.Calls += c.Calls
			all.Answered += c.Answered
		}
		calls = fmt.Sprintf(", %s Go client calls, %.2f%% answered", commas(all.Calls), 100*all.Availability())
	}
	wall := wallText(info, "cluster start")
	p("Summary: %s raw requests, %.2f%% answered%s, %s IDs in %s of load%s: %s.\n\n",
		commas(r.Totals.Requests), 100*r.Totals.Availability(), calls, commas(r.Totals.IDs), r.End.Sub(r.Start).Round(time.Second),
		wall, verdict)
	for _, pr := range out.Problems {
		p("**Problem:** %s\n\n", pr)
	}
	p("![IDs per second with the fault windows shaded](reliability.png)\n\n")
	writeSchedule(&b, sc.Seed, out.Faults, r)
	writeAvailability(&b, out)
	writeOutages(&b, out)
	writeRestarts(&b, out)
	writeStops(&b, out)
	writeOperations(&b, out)
	bad := false
	kinds := faultKinds(out.Faults)
	for _, wr := range r.Windows {
		if wr.Anomalies() == 0 {
			continue
		}
		if !bad {
			p("\n## Faults with anomalies\n\n| fault | duplicates | order violations | out of range | known cause |\n|---|---:|---:|---:|---|\n")
			bad = true
		}
		p("| %s | %d | %d | %d | %s |\n", wr.Name, wr.Duplicates, wr.OrderViolations, wr.OutOfRange, anomalyCause(kinds[wr.Name], wr.OrderViolations > 0))
	}
	p("\n## Checker report\n\n")
	p("The checker's availability figures (requests, answered, gaps) are the raw HTTP workload's; the Go client's " +
		"IDs, and the restart probes', are in its ID counts and checks.\n\n")
	return writeOut(w, &b, r)
}

// writeHead writes a report's title, when it was generated (by schedule, when
// not the default one) and the command that reproduces it.
func writeHead(b *strings.Builder, title, schedule string, r checker.Result, info ReportInfo) {
	fmt.Fprintf(b, "# Reliability: %s\n\n", title)
	fmt.Fprintf(b, "Generated by the fault harness (`verify/harness`%s) on %s. Reproduce with:\n\n```sh\n%s\n```\n\n",
		schedule, r.Start.UTC().Format("2006-01-02 15:04 MST"), info.Command)
}

// writeNotes writes the run's notes, a paragraph each.
func writeNotes(b *strings.Builder, info ReportInfo) {
	for _, n := range info.Notes {
		fmt.Fprintf(b, "%s\n\n", n)
	}
}

// verdictText is the summary's verdict: bold, no anomaly (dups says where
// duplicates were looked for) or anomalies found.
func verdictText(r checker.Result, dups string) string {
	if !r.OK() {
		return "**ANOMALIES FOUND** (see below)"
	}
	return "**" + dups + ", no order violation, no ID out of range**"
}

// wallText is the summary's wall time, with what it includes (" (wall time with
// cluster start 2m)"); "" when unknown.
func wallText(info ReportInfo, with string) string {
	if info.Wall <= 0 {
		return ""
	}
	return fmt.Sprintf(" (wall time with %s %s)", with, info.Wall.Round(time.Second))
}

// writeSchedule writes the schedule as it ran: each fault, its kind, when it
// began, how long it was planned to last and took, and the harness's error.
func writeSchedule(b *strings.Builder, seed uint64, faults []FaultRun, r checker.Result) {
	fmt.Fprintf(b, "## Schedule (seed %d)\n\n| fault | kind | begins | planned | took | harness error |\n|---|---|---|---|---|---|\n", seed)
	for _, fr := range faults {
		e := ""
		if fr.Err != nil {
			e = strings.ReplaceAll(fr.Err.Error(), "|", "/")
		}
		fmt.Fprintf(b, "| %s | %s | T+%.1fs | %s | %.1fs | %s |\n", fr.Fault.Name, fr.Fault.Kind, fr.Start.Sub(r.Start).Seconds(),
			fr.Fault.For.Round(100*time.Millisecond), fr.End.Sub(fr.Start).Seconds(), e)
	}
}

// faultKinds maps each fault's name to its kind.
func faultKinds(faults []FaultRun) map[string]string {
	kinds := map[string]string{}
	for _, fr := range faults {
		kinds[fr.Fault.Name] = fr.Fault.Kind
	}
	return kinds
}

// writeOut writes the report's prose b, then the checker's tables.
func writeOut(w io.Writer, b *strings.Builder, r checker.Result) error {
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return checker.WriteMarkdown(w, r)
}

func at(r checker.Result, t time.Time) string {
	return fmt.Sprintf("T+%.1fs", t.Sub(r.Start).Seconds())
}

// faultAt returns the fault whose window (plus grace after its end) holds t.
func faultAt(out *Outcome, t time.Time, grace time.Duration) (FaultRun, bool) {
	for i := len(out.Faults) - 1; i >= 0; i-- {
		fr := out.Faults[i]
		if !fr.Start.IsZero() && !t.Before(fr.Start) && !t.After(fr.End.Add(grace)) {
			return fr, true
		}
	}
	return FaultRun{}, false
}

// writeAvailability writes availability per namespace both ways: the raw requests
// (the nodes) and the Go client's calls (its callers), with the longest wait.
func writeAvailability(b *strings.Builder, out *Outcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	r := out.Result
	p("\n## Availability: the nodes, and the Go client's callers\n\n")
	if out.Calls == nil {
		p("The Go-client workload did not run.\n\n")
	}
	p("Raw HTTP: the share of requests a node answered. Go client: the share of `Next` calls that returned an ID, " +
		"and the longest time one caller waited for one (from the start of a call, or of the first of a run of " +
		"failed calls, to the ID).\n\n")
	p("| namespace | raw requests | answered | Go client calls | answered | longest wait for an ID | when |\n|---|---:|---:|---:|---:|---|---|\n")
	for _, ns := range r.Namespaces {
		c := out.Calls[ns.Name]
		if c == nil {
			p("| %s | %s | %.2f%% | – | – | – | – |\n", ns.Name, commas(ns.Requests), 100*ns.Availability())
			continue
		}
		when := "–"
		if c.Wait > 0 {
			when = at(r, c.WaitFrom)
			if fr, ok := faultAt(out, c.WaitFrom, 5*time.Second); ok {
				when += ", " + fr.Fault.Name
			}
			if c.Open {
				when += " (still waiting at the end)"
			}
		}
		p("| %s | %s | %.2f%% | %s | %.2f%% | %s | %s |\n", ns.Name, commas(ns.Requests), 100*ns.Availability(),
			commas(c.Calls), 100*c.Availability(), c.Wait.Round(time.Millisecond), when)
	}
	var classes []string
	for _, ns := range allNamespaces() {
		c := out.Calls[ns]
		if c == nil {
			continue
		}
		for cl, n := range c.Errors {
			classes = append(classes, fmt.Sprintf("| %s | %s | %d |", ns, strings.ReplaceAll(cl, "|", "/"), n))
		}
	}
	if len(classes) > 0 {
		slices.Sort(classes)
		p("\nGo client calls that failed, by class (when every node refused alike, its answer; else each distinct failure joined by +):\n\n| namespace | class | calls |\n|---|---|---:|\n%s\n", strings.Join(classes, "\n"))
	}
}

// outageRow is one namespace during one store outage.
type outageRow struct {
	rawFailed, raw503, callsFailed, calls503 int
	first                                    time.Time // first refusal (a 503 or a Go call every node refused), zero for none
}

// outageCounts counts, in [from, to], ns's failed raw requests and Go-client calls
// and the refusals among them, and finds the first refusal.
func outageCounts(out *Outcome, ns string, from, to time.Time) outageRow {
	var row outageRow
	first := func(t time.Time) {
		if row.first.IsZero() || t.Before(row.first) {
			row.first = t
		}
	}
	for _, o := range out.raw {
		if o.ns != ns || o.answered || o.start.Before(from) || o.start.After(to) {
			continue
		}
		row.rawFailed++
		if o.refused {
			row.raw503++
			first(o.start)
		}
	}
	for _, c := range out.calls {
		if c.ns != ns || c.err == "" || c.start.Before(from) || c.start.After(to) {
			continue
		}
		row.callsFailed++
		if strings.HasPrefix(c.err, "503") {
			row.calls503++
			first(c.start)
		}
	}
	return row
}

// writeOutages writes, per store outage and per namespace that depends on the store,
// the refusals during it, when they began after the outage's start, their causes
// as the nodes logged them, and what the outage budget promises.
func writeOutages(b *strings.Builder, out *Outcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var rows []string
	for _, fr := range out.Faults {
		sd, ok := fr.Fault.Action.(storeDown)
		if !ok || fr.Start.IsZero() {
			continue
		}
		for _, ns := range allNamespaces() {
			if leaseStore(ns) != sd.s {
				continue
			}
			row := outageCounts(out, ns, fr.Start, fr.End)
			first := "none"
			if !row.first.IsZero() {
				first = fmt.Sprintf("+%.1fs", row.first.Sub(fr.Start).Seconds())
			}
			cause := causes(out.logs, ns, "", fr.Start, fr.End.Add(2*time.Second))
			if cause == "" {
				cause = "–"
			}
			expect := ""
			switch {
			case ns == NSRedisGen:
				expect = "refuses at once: every ID is made inside Redis"
			case ns == NSSegment:
				expect = "answers from its buffered ranges, then refuses"
			case fr.Fault.For < out.Budget:
				expect = fmt.Sprintf("answers throughout (shorter than the %s budget): ", out.Budget)
				if row.raw503+row.calls503 == 0 {
					expect += "**yes**"
				} else {
					expect += "**no**"
				}
			default:
				expect = fmt.Sprintf("answers for the %s budget, then refuses until the store answers: ", out.Budget)
				switch d := row.first.Sub(fr.Start); {
				case row.first.IsZero():
					expect += "**did not stop**"
				case d < out.Budget:
					expect += fmt.Sprintf("stopped %.1fs before the budget was spent", (out.Budget - d).Seconds())
				default:
					expect += fmt.Sprintf("stopped %.1fs after it was spent", (d - out.Budget).Seconds())
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d (%d) | %d (%d) | %s | %s | %s |", fr.Fault.Name, fr.Fault.For.Round(100*time.Millisecond),
				ns, row.rawFailed, row.raw503, row.callsFailed, row.calls503, first, cause, expect))
		}
	}
	p("\n## Store outages: when refusals began, and why\n\n")
	if len(rows) == 0 {
		p("No store outage in this schedule.\n")
		return
	}
	p("A store outage cuts every node off one store (hang: packets vanish; refuse: TCP resets). Per namespace that "+
		"depends on the store: the raw requests and the Go client's calls that failed during the outage, and in "+
		"brackets those refused (a 503; for a call, every node answered 503), when the first refusal came after the "+
		"outage began, and the causes the "+
		"nodes logged (`a request was refused` lines, at most one a second per namespace and node, so the counts are "+
		"of log lines, not of requests), classified by the generator's error text. A snowflake namespace rides through an "+
		"outage for its outage budget (%s): it must answer throughout a shorter one and stop once the budget is spent "+
		"in a longer one, with the cause \"%s\".\n\n", out.Budget, CauseBudget)
	p("| outage | length | namespace | raw requests failed (503) | Go client calls failed (refused) | first refusal | cause (node logs) | expected |\n|---|---|---|---:|---:|---|---|---|\n")
	p("%s\n", strings.Join(rows, "\n"))
}

// writeRestarts writes each restart's time to the first ID per namespace.
func writeRestarts(b *strings.Builder, out *Outcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Restarts: time to the first ID\n\n")
	if len(out.Restarts) == 0 {
		p("No node restart in this schedule.\n")
		return
	}
	p("For every node restart of the schedule, a probe on a client host asks the node for one ID of each namespace "+
		"every %s from the moment its process starts, and times the first answer. A restarted node must serve within "+
		"a second, also one whose clock stands behind the IDs it issued before: by default (behind: logical) its "+
		"snowflake namespaces issue above them at once, ahead of its clock.\n\n", probeEvery)
	p("| restart | node | namespace | time to first ID | target | last failure before it |\n|---|---|---|---|---|---|\n")
	for _, rt := range out.Restarts {
		got := rt.First.Round(time.Millisecond).String()
		if !rt.Answered {
			got = fmt.Sprintf("no ID in %s (%s)", rt.First.Round(100*time.Millisecond), rt.Cut)
		}
		target := "≤ 1s: "
		switch {
		case rt.Answered && rt.First <= time.Second:
			target += "**yes**"
		default:
			target += "**no**"
		}
		last := rt.Last
		if last == "" {
			last = "–"
		}
		p("| %s (%s) | %s | %s | %s | %s | %s |\n", rt.Kind, at(out.Result, rt.At), rt.Node, rt.Namespace, got, target, strings.ReplaceAll(last, "|", "/"))
	}
}

// writeStops writes where a namespace went without IDs for a second or more during
// a fault, and the nodes that refused, with the causes they logged.
func writeStops(b *strings.Builder, out *Outcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	r := out.Result
	p("\n## Where flurry stopped, for how long, and why\n\n")
	p("A namespace stopped when no node delivered one of its IDs to the raw clients for a second or more inside a fault's window " +
		"(the longest such gap is given; per-node refusals show in the answered %% of the tables below).\n\n")
	p("| fault | namespace | no ID from any node for | why stopping is the safe choice |\n|---|---|---|---|\n")
	stops := 0
	faults := map[string]Fault{}
	for _, fr := range out.Faults {
		faults[fr.Fault.Name] = fr.Fault
	}
	for _, wr := range r.Windows {
		f := faults[wr.Name]
		for _, ns := range wr.Namespaces {
			if ns.Gap.Duration() < time.Second {
				continue
			}
			why := stopReason(f, ns.Name, out.Budget)
			if why == "" {
				why = "(not expected for this fault: see the failed requests by class)"
			}
			p("| %s | %s | %s | %s |\n", wr.Name, ns.Name, ns.Gap.Duration().Round(10*time.Millisecond), why)
			stops++
		}
	}
	if stops == 0 {
		p("| – | – | – | no fault stopped a namespace for a second or more |\n")
	}
	p("\n### Nodes that refused (503) for a second or more\n\n" +
		"Per node: from its first 503 to the next request it answered. The other nodes may have answered meanwhile. " +
		"The cause is what the node logged for the namespace in that span (the generator's error, classified by its text); " +
		"flurry's log leaves out a warning that repeats the one before it, so a namespace refusing at the same time as " +
		"another may have none logged.\n\n")
	p("| fault | namespace | node | refused for | from | reason (first 503) | cause (node log) | why refusing is the safe choice |\n|---|---|---|---|---|---|---|---|\n")
	for _, rf := range out.Refusals {
		fault, why := "(none: after a fault)", "(see the fault's row above, or the node's log)"
		if fr, ok := faultAt(out, rf.From, 5*time.Second); ok {
			fault = fr.Fault.Name
			if w := stopReason(fr.Fault, rf.Namespace, out.Budget); w != "" && w != clientWait {
				why = w
			}
		}
		cause := causes(out.logs, rf.Namespace, rf.Node, rf.From.Add(-time.Second), rf.To)
		if cause == "" {
			cause = "– (none logged)"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", fault, rf.Namespace, rf.Node, rf.To.Sub(rf.From).Round(10*time.Millisecond),
			at(r, rf.From), strings.ReplaceAll(rf.Reason, "|", "/"), cause, why)
	}
	if len(out.Refusals) == 0 {
		p("| – | – | – | – | – | – | – | no node refused for a second or more |\n")
	}
}

// WritePlot draws IDs/s per namespace over time (1 s buckets) with the fault windows
// shaded.
func WritePlot(w io.Writer, out *Outcome) error {
	ch := plot.Chart{
		Title:  "flurry under faults: IDs received per second",
		XLabel: "seconds since the first request",
		YLabel: "IDs/s",
		Series: out.Checker.Throughput(time.Second),
		Shade:  out.Checker.Bands(out.Windows),
	}
	return ch.WritePNG(w, 1800, 700)
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// RedisMode returns "sentinel" when the flurry binary knows the redis+sentinel://
// scheme, else "primary".
func RedisMode(ctx context.Context, flurry string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, flurry, "lease", "list", "redis+sentinel://127.0.0.1:1/"+RedisMaster+"/0").CombinedOutput()
	if strings.Contains(string(out), "unknown store scheme") {
		return "primary"
	}
	return "sentinel"
}

// ReportNotes are the report's notes on what this machine and build could not do.
func ReportNotes(redisMode string) []string {
	notes := []string{
		"Delay and loss: this machine's kernel is built without `sch_netem`, so `tc netem` is not available. " +
			"Packet loss is an nftables rule (`numgen random mod 100 < P drop`) in the node's namespace, both ways; " +
			"delay is an iptables NFQUEUE rule on everything the node sends, with the harness holding each packet for " +
			"the delay before accepting it (`verify/netns/delay.go`), which adds the delay to every round trip of the " +
			"node with the stores and the clients.",
	}
	if redisMode != "sentinel" {
		notes = append(notes, "Redis: this flurry build does not accept `redis+sentinel://` URLs, so the nodes use "+
			"`redis://` to the first primary and do not follow a Sentinel failover: after a failover or the primary's "+
			"death the `sfr` namespace stops (fences) until that host answers again, as a replica of the new primary (read-only).")
	}
	return notes
}
