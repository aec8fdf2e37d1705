package harness

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/checker"
	"github.com/flurryid/flurry/internal/plot"
)

// ReportInfo is what a report says about how its run was made.
type ReportInfo struct {
	// Command replays the run.
	Command string
	// Notes are extra paragraphs (the machine, what was left out and why).
	Notes []string
	// RedisURL is how the nodes reached Redis.
	RedisURL string
	TTL      time.Duration
	Wall     time.Duration
}

// fenceWhy explains, per fault kind and namespace, why flurry stopping there is the
// safe choice. Only pairs where flurry is expected to stop are listed.
var fenceWhy = map[string]string{
	"hangs-etcd/" + NSEtcd: "Every node's renewals went unanswered. Each node stops issuing when its grant ends " +
		"(TTL − (TTL/10 + 50 ms) after the last renewal it sent that was confirmed), before etcd can expire " +
		"the lease and give the node value to another process: issuing on could give two live holders one " +
		"value, which is how duplicates happen. A node cannot tell a hung store from a partition in which " +
		"another process already holds its value. It resumes by itself when a renewal goes through.",
	"refuses-etcd/" + NSEtcd: "As for a hanging etcd, but every renewal fails at once: the node keeps issuing until " +
		"its grant ends, then stops for the same reason, and resumes on the first renewal that succeeds.",
	"hangs-redis/" + NSRedis:   "The Redis lease cannot be renewed: each node stops when its grant ends (see etcd), for the same reason.",
	"refuses-redis/" + NSRedis: "The Redis lease cannot be renewed: each node stops when its grant ends (see etcd), for the same reason.",
	"hangs-postgres/" + NSSegment: "A segment node issues from the ranges it holds; when they are used up and " +
		"no store hands out a new range it refuses: a range not confirmed by the database may be handed to " +
		"another node. A longer `runway` keeps more IDs buffered for such an outage.",
	"refuses-postgres/" + NSSegment:    "As for a hanging PostgreSQL: the buffered ranges are used, then the node refuses until the store answers.",
	"hangs-redis/" + NSRedisGen:        redisGenDown,
	"refuses-redis/" + NSRedisGen:      redisGenDown,
	"kill-redis-primary/" + NSRedisGen: redisGenDown,
	"redis-failover/" + NSRedisGen:     redisGenDown,
	"pg-failover/" + NSSegment: "Range fetches fail until the standby is promoted and the nodes reconnect to it; " +
		"a node whose buffered ranges run out first refuses rather than invent a range.",
	"kill-etcd-leader/" + NSEtcd:    "Renewals wait for the new leader; a node whose grant ends first stops until a renewal succeeds.",
	"kill-redis-primary/" + NSRedis: "Renewals fail until the nodes reach a primary again; a node whose grant ends first stops.",
	"redis-failover/" + NSRedis:     "Renewals fail while the primary changes; a node whose grant ends first stops.",
	"partition-stores/" + NSEtcd:    "The cut-off node stops when its grant ends (the other nodes go on): it cannot prove it still holds its value.",
	"partition-stores/" + NSRedis:   "The cut-off node stops when its grant ends (the other nodes go on): it cannot prove it still holds its value.",
	"partition-stores/" + NSSegment: "The cut-off node issues from its buffered range, then refuses: it cannot get a range confirmed.",
	"skew-behind/" + NSEtcd:         "A node restarted with its clock behind must not issue IDs below those it issued before.",
	"skew-behind/" + NSRedis:        "A node restarted with its clock behind must not issue IDs below those it issued before.",
	"skew-ahead/" + NSEtcd:          "After running 30 s ahead, the node restarted on the true clock stands behind its own mark: it waits (or takes another value) rather than issue below IDs it has issued.",
	"skew-ahead/" + NSRedis:         "After running 30 s ahead, the node restarted on the true clock stands behind its own mark: it waits (or takes another value) rather than issue below IDs it has issued.",
	"sigstop-takeover/" + NSEtcd: "The paused node woke after another process had taken its node value: it must " +
		"not issue with that value again (it refuses until it holds a lease, another value). Its IDs and the " +
		"taker's are checked together (node \"takeover\" in the tables).",
	"sigstop-node/" + NSEtcd:  "A paused node that wakes after its grant ended refuses until it has renewed: its lease may have expired while it slept.",
	"sigstop-node/" + NSRedis: "A paused node that wakes after its grant ended refuses until it has renewed: its lease may have expired while it slept.",
}

// stopReason says why a gap in namespace ns during a fault of the kind is the safe
// choice, or that it is not flurry's stop at all; "" when no reason is known.
func stopReason(kind, ns string) string {
	if why, ok := fenceWhy[kind+"/"+ns]; ok {
		return why
	}
	switch kind {
	case "sigstop-node", "sigstop-takeover", "partition-clients", "delay", "loss", "sigkill-node":
		return clientWait
	}
	return ""
}

// anomalyCause names the known flurry defect behind anomalies in a fault of the kind.
func anomalyCause(kind string, order bool) string {
	if order && (kind == "skew-behind" || kind == "skew-ahead") {
		return "A node restarted on a clock behind the IDs it issued before took a never-used node value " +
			"and issued below them: the restart-order defect of issue 9 (the same process restarting must " +
			"continue above what its scope issued). Check the examples: every one is \"across a restart of the node\"."
	}
	return "unknown: a flurry bug to investigate (replay with the command above)"
}

const redisGenDown = "redisgen makes every ID inside Redis (one Lua script reads TIME and the last tick): " +
	"with no writable Redis there is nothing to issue from, and no local state that could stand in without " +
	"risking an ID the next primary also hands out."

const lossWhy = "Renewals slowed or lost by the network did not confirm the lease in time: the node stops at its " +
	"grant's end rather than issue on a lease it cannot prove it still holds."

const clientWait = "Not a stop of flurry: the other nodes kept answering, but the clients whose requests " +
	"went to the unreachable node waited out their per-request timeout (2 s) before moving to the next node, " +
	"and at that moment every worker of the namespace was waiting there. A client that hedges (asks a second " +
	"node after a short delay) would not see this gap."

// WriteReport writes docs/reliability.md's content: how the run was made, the
// schedule, the checker's tables, and where flurry stopped and why.
func WriteReport(w io.Writer, sc Scenario, out *Outcome, info ReportInfo) error {
	r := out.Result
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Reliability: flurry under network faults\n\n")
	p("Generated by the fault harness (`internal/harness`) on %s. Reproduce with:\n\n```sh\n%s\n```\n\n",
		r.Start.UTC().Format("2006-01-02 15:04 MST"), info.Command)
	p("Hosts are Linux network namespaces on one bridge (itself in a namespace; nothing in the root namespace, no route out): "+
		"a 3-member etcd cluster, Redis (primary, replica, 3 sentinels), a PostgreSQL cluster started by the harness, "+
		"three `flurry serve` nodes and two client hosts. Each node serves `sfe` (snowflake, node value leased from etcd "+
		"through the endpoint list of all three members), `sfr` (snowflake, leased from Redis: %s), `rg` (redisgen: each ID made inside Redis by a Lua script, "+
		"same URL) and `seg` (segment "+
		"ranges from PostgreSQL: a primary and a streaming standby, reached by one multi-host URL with "+
		"`target_session_attrs=read-write`). Lease TTL %s, reservation window 1 s. Clients ask for batches of IDs "+
		"(`GET /v1/{ns}/next?count=N&format=text`) with a bounded timeout, stay on a node while it answers and move to the "+
		"next one after an error, and record every request; the checker (`internal/checker`) reads them all.\n\n",
		info.RedisURL, info.TTL)
	for _, n := range info.Notes {
		p("%s\n\n", n)
	}
	verdict := "**no duplicate, no order violation, no ID out of range**"
	if !r.OK() {
		verdict = "**ANOMALIES FOUND** (see below)"
	}
	p("Summary: %d requests, %.2f%% answered, %s IDs in %s of load (wall time with cluster start %s): %s.\n\n",
		r.Totals.Requests, 100*r.Totals.Availability(), commas(r.Totals.IDs), r.End.Sub(r.Start).Round(time.Second), info.Wall.Round(time.Second), verdict)
	for _, pr := range out.Problems {
		p("**Problem:** %s\n\n", pr)
	}
	p("![IDs per second with the fault windows shaded](reliability.png)\n\n")
	p("## Schedule (seed %d)\n\n| fault | kind | begins | planned | took | harness error |\n|---|---|---|---|---|---|\n", sc.Seed)
	for _, fr := range out.Faults {
		e := ""
		if fr.Err != nil {
			e = strings.ReplaceAll(fr.Err.Error(), "|", "/")
		}
		p("| %s | %s | T+%.1fs | %s | %.1fs | %s |\n", fr.Fault.Name, fr.Fault.Kind, fr.Start.Sub(r.Start).Seconds(), fr.Fault.For.Round(100*time.Millisecond), fr.End.Sub(fr.Start).Seconds(), e)
	}
	p("\n## Where flurry stopped, for how long, and why\n\n")
	p("A namespace stopped when no node delivered one of its IDs for a second or more inside a fault's window " +
		"(the longest such gap is given; per-node refusals show in the answered %% of the tables below).\n\n")
	p("| fault | namespace | no ID from any node for | why stopping is the safe choice |\n|---|---|---|---|\n")
	stops := 0
	kinds := map[string]string{}
	for _, fr := range out.Faults {
		kinds[fr.Fault.Name] = fr.Fault.Kind
	}
	for _, wr := range r.Windows {
		kind := kinds[wr.Name]
		for _, ns := range wr.Namespaces {
			if ns.Gap.Duration() < time.Second {
				continue
			}
			why := stopReason(kind, ns.Name)
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
		"Per node: from its first 503 to the next request it answered. The other nodes may have answered meanwhile.\n\n")
	p("| fault | namespace | node | refused for | from | reason (first 503) | why refusing is the safe choice |\n|---|---|---|---|---|---|---|\n")
	for _, rf := range out.Refusals {
		fault, kind := "(none: after a fault)", ""
		for _, fr := range out.Faults {
			if !fr.Start.IsZero() && !rf.From.Before(fr.Start) && !rf.From.After(fr.End.Add(5*time.Second)) {
				fault, kind = fr.Fault.Name, fr.Fault.Kind
			}
		}
		why := stopReason(kind, rf.Namespace)
		if why == clientWait || why == "" {
			why = "(see the fault's row above, or the node's log)"
		}
		p("| %s | %s | %s | %s | T+%.1fs | %s | %s |\n", fault, rf.Namespace, rf.Node, rf.To.Sub(rf.From).Round(10*time.Millisecond),
			rf.From.Sub(r.Start).Seconds(), strings.ReplaceAll(rf.Reason, "|", "/"), why)
	}
	if len(out.Refusals) == 0 {
		p("| – | – | – | – | – | – | no node refused for a second or more |\n")
	}
	bad := false
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
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return checker.WriteMarkdown(w, r)
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
			"the delay before accepting it (`internal/netns/delay.go`), which adds the delay to every round trip of the " +
			"node with the stores and the clients.",
	}
	if redisMode != "sentinel" {
		notes = append(notes, "Redis: this flurry build does not accept `redis+sentinel://` URLs, so the nodes use "+
			"`redis://` to the first primary and do not follow a Sentinel failover: after a failover or the primary's "+
			"death the `sfr` namespace stops (fences) until that host answers again, as a replica of the new primary (read-only).")
	}
	return notes
}
