package harness

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/verify/checker"
)

// WriteRegionsReport writes the report of a regions run (docs/reliability-regions.md):
// how the two regions were built, the schedule, each region's availability through
// the Go client and at its own nodes over the run and in each fault, the cut
// check, and the checker's tables over the IDs of both regions.
func WriteRegionsReport(w io.Writer, sc Scenario, out *RegionsOutcome, info ReportInfo) error {
	r := out.Result
	ld := sc.Load.withDefaults()
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	writeHead(&b, "flurry in two regions", ", the regions schedule", r, info)
	p("Two groups of hosts (Linux network namespaces on one bridge), regions a and b. Every packet from one region to the "+
		"other is held %s (an NFQUEUE delay on each host, for the other region's addresses only; traffic inside a region "+
		"is not delayed): the round trip measured between them was %s. Each region has its own 3-member etcd cluster and "+
		"three `flurry serve` nodes serving `%s`, a snowflake namespace with the layout `%s`: the datacenter field fixed "+
		"per region (`node: datacenter=N`: a is %d, b is %d), the worker field leased from the region's own etcd. %s\n\n",
		out.Delay, out.RTT.Round(time.Millisecond), NSRegion, RegionLayout, out.Datacenters["a"], out.Datacenters["b"], leaseText(info, &out.Outcome))
	p("A client host in each region runs two workloads, and the checker (`verify/checker`) checks every ID of both regions "+
		"together (duplicates across the regions, per-node order, range). **The Go client**: %d `client.Client`s with the "+
		"region's three servers as its `Servers` and the other region's three as its one `Remote` region (it asks the "+
		"other region only when every server of its own has failed, and its own again once their backoff has passed), documented defaults (%s per request, failover, hedging), %d callers "+
		"calling `Next` (%.0f calls a second per region, a deadline of %s per call). **Raw HTTP** to the region's own "+
		"three nodes only: %d workers asking for %d IDs per request, %s timeout: it shows whether the region's nodes refused.\n\n",
		ld.Clients, client.DefaultTimeout, ld.Callers, ld.CallRate, ld.CallTimeout, ld.Workers, ld.Count, ld.Timeout)
	writeNotes(&b, info)
	verdict := verdictText(r, "no duplicate across the regions")
	wall := wallText(info, "the regions' start")
	p("Summary: %s IDs in %s of load%s: %s.\n\n", commas(r.Totals.IDs), r.End.Sub(r.Start).Round(time.Second), wall, verdict)
	cut := "each region answered at least %.1f%% of its Go-client calls and of the requests to its own nodes while the regions were cut apart " +
		"or one region was cut off"
	if len(out.Problems) == 0 {
		p("The cut check: **passed**: "+cut+".\n\n", 100*MinCutAvailability)
	}
	for _, pr := range out.Problems {
		p("**Problem:** %s\n\n", pr)
	}
	p("![IDs per second with the fault windows shaded](reliability-regions.png)\n\n")
	writeSchedule(&b, sc.Seed, out.Faults, r)
	p("\n## Availability per region\n\n")
	p("Per span (the whole run, then each fault window) and region: the Go client's `Next` calls begun in it, the share " +
		"answered, the share of the IDs they got that the other region's nodes issued, the longest a caller waited for an " +
		"ID, and the raw requests to the region's own nodes and the share answered.\n\n")
	p("| span | region | Go calls | answered | from the other region | longest wait | raw requests | answered | failed calls by class |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, row := range out.Rows {
		span := row.Window
		if span == "" {
			span = "**whole run**"
		}
		remote := "–"
		if row.Calls.Answered > 0 {
			remote = fmt.Sprintf("%.2f%%", 100*float64(row.Remote)/float64(row.Calls.Answered))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %.3f%% | %s |\n", span, row.Region, commas(row.Calls.Calls), pctCalls(row.Calls),
			remote, row.Calls.Wait.Round(time.Millisecond), commas(row.Requests), 100*row.RawAvailability(), errorClasses(row.Calls.Errors))
	}
	writeExpectations(&b, out, r)
	writeRegionRefusals(&b, out, r)
	kinds := faultKinds(out.Faults)
	bad := false
	for _, wr := range r.Windows {
		if wr.Anomalies() == 0 {
			continue
		}
		if !bad {
			p("\n## Faults with anomalies\n\n| fault | kind | duplicates | order violations | out of range |\n|---|---|---:|---:|---:|\n")
			bad = true
		}
		p("| %s | %s | %d | %d | %d |\n", wr.Name, kinds[wr.Name], wr.Duplicates, wr.OrderViolations, wr.OutOfRange)
	}
	p("\n## Checker report\n\n")
	p("The checker's availability figures are the raw HTTP workload's (each region's requests to its own nodes); the Go " +
		"client's IDs are in its ID counts and checks.\n\n")
	return writeOut(w, &b, r)
}

// writeRegionRefusals lists the spans in which a node refused (503) for a second
// or more, from the raw requests.
func writeRegionRefusals(b *strings.Builder, out *RegionsOutcome, r checker.Result) {
	fmt.Fprintf(b, "\n## Nodes that refused (503) for a second or more\n\n")
	if len(out.Refusals) == 0 {
		fmt.Fprintf(b, "None.\n")
		return
	}
	fmt.Fprintf(b, "| node | from | for | during | first refusal |\n|---|---|---:|---|---|\n")
	for _, rf := range out.Refusals {
		during := "–"
		if fr, ok := faultAt(&out.Outcome, rf.From, 5*time.Second); ok {
			during = fr.Fault.Name
		}
		fmt.Fprintf(b, "| %s | %s | %.1fs | %s | %s |\n", rf.Node, at(r, rf.From), rf.To.Sub(rf.From).Seconds(), during,
			strings.ReplaceAll(rf.Reason, "|", "/"))
	}
}

func pctCalls(c Calls) string {
	if c.Calls == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f%%", 100*c.Availability())
}

// errorClasses lists failed calls by class, most first ("–" for none).
func errorClasses(m map[string]int64) string {
	if len(m) == 0 {
		return "–"
	}
	type kv struct {
		k string
		v int64
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	for i := range l {
		for j := i + 1; j < len(l); j++ {
			if l[j].v > l[i].v || l[j].v == l[i].v && l[j].k < l[i].k {
				l[i], l[j] = l[j], l[i]
			}
		}
	}
	var s []string
	for _, e := range l {
		s = append(s, fmt.Sprintf("%s: %d", strings.ReplaceAll(e.k, "|", "/"), e.v))
	}
	return strings.Join(s, "; ")
}

// writeExpectations writes, per fault, what the two regions must do or are
// expected to do through it, as planned by its kind, and whether they did: the
// cut check's faults (cutKind) fail the run when they do not (RegionsOutcome's
// Problems); the others' figures are there to read.
func writeExpectations(b *strings.Builder, out *RegionsOutcome, r checker.Result) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## What each fault was expected to do\n\n| fault | kind | expected | held |\n|---|---|---|---|\n")
	rows := map[[2]string]RegionRow{}
	for _, row := range out.Rows {
		rows[[2]string{row.Window, row.Region}] = row
	}
	anomalies := map[string]int64{}
	for _, wr := range r.Windows {
		anomalies[wr.Name] = wr.Anomalies()
	}
	min := 100 * MinCutAvailability
	answered := func(row RegionRow) bool {
		return row.Calls.Availability() >= MinCutAvailability && row.RawAvailability() >= MinCutAvailability
	}
	figures := func(row RegionRow) string {
		return fmt.Sprintf("region %s %s of its calls, %.3f%% of its raw requests", row.Region, pctCalls(row.Calls), 100*row.RawAvailability())
	}
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	for _, fr := range out.Faults {
		if fr.Start.IsZero() {
			continue
		}
		f := fr.Fault
		x := targetRegion(f)
		y := map[string]string{"a": "b", "b": "a"}[x]
		rx, ry := rows[[2]string{f.Name, x}], rows[[2]string{f.Name, y}]
		var expected, held string
		switch f.Kind {
		case KindRegionCut:
			ra, rb := rows[[2]string{f.Name, "a"}], rows[[2]string{f.Name, "b"}]
			expected = fmt.Sprintf("each region answers at least %.1f%% of its Go-client calls and of the raw requests to its own nodes: its etcd is its own", min)
			held = fmt.Sprintf("%s (%s; %s)", yes(answered(ra) && answered(rb)), figures(ra), figures(rb))
		case KindRegionIsolated:
			expected = fmt.Sprintf("region %s keeps issuing for its own clients, at least %.1f%% of their calls and raw requests: its etcd is inside the cut; "+
				"region %s's clients are answered by their own region, at least %.1f%%, and get no ID from region %s, out of their reach", x, min, y, min, x)
			remote := fmt.Sprintf("%d IDs of region %s's from region %s", ry.Remote, y, x)
			held = fmt.Sprintf("%s (%s; %s; %s)", yes(answered(rx) && answered(ry) && ry.Remote == 0), figures(rx), figures(ry), remote)
		case KindRegionStoreDown:
			expected = fmt.Sprintf("region %s's nodes answer for the %s outage budget, then refuse until their etcd is back; "+
				"its Go clients then get IDs from region %s", x, out.Budget, y)
			held = fmt.Sprintf("– (%s; %s of its IDs from region %s)", figures(rx), share(rx), y)
		case KindRegionDown:
			expected = fmt.Sprintf("region %s's Go clients get their IDs from region %s, their `Remote`", x, y)
			held = fmt.Sprintf("%s (%s of region %s's IDs from region %s; %s)", yes(rx.Remote > 0), share(rx), x, y, figures(rx))
		case KindRegionClockBack:
			expected = fmt.Sprintf("no duplicate and no order violation: region %s, restarted behind, issues above its earlier IDs", x)
			held = fmt.Sprintf("%s (%d anomalies in the window)", yes(anomalies[f.Name] == 0), anomalies[f.Name])
		default:
			continue
		}
		p("| %s | %s | %s | %s |\n", f.Name, f.Kind, expected, held)
	}
}

// share is the part of a row's answered calls' IDs that the other region issued.
func share(row RegionRow) string {
	if row.Calls.Answered == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(row.Remote)/float64(row.Calls.Answered))
}
