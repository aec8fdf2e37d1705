package checker

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/plot"
)

// WriteMarkdown writes r as the Markdown of docs/reliability.md: a verdict, a
// summary table per namespace, errors by class, a table per node, the anomalies
// with examples, and one table per fault window. Times are given as T+seconds from
// r.Start.
func WriteMarkdown(w io.Writer, r Result) error {
	bw := bufio.NewWriter(w)
	m := md{w: bw, origin: r.Start}
	m.result(r)
	return bw.Flush()
}

type md struct {
	w      *bufio.Writer
	origin time.Time
}

func (m md) f(format string, a ...any) { fmt.Fprintf(m.w, format, a...) }

// at formats an instant as T+seconds since the run's start.
func (m md) at(t time.Time) string { return fmt.Sprintf("T+%.3fs", t.Sub(m.origin).Seconds()) }

func dur(d time.Duration) string {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func pct(c Counts) string {
	if c.Requests == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f%%", 100*c.Availability())
}

func (m md) gap(g Gap) string {
	return fmt.Sprintf("%s (%s–%s)", dur(g.Duration()), m.at(g.From), m.at(g.To))
}

func (m md) result(r Result) {
	m.f("### Verdict\n\n")
	if r.OK() {
		m.f("**OK**: %d IDs in %d requests, no duplicate, no order violation, no ID out of range.\n\n", r.Totals.IDs, r.Totals.Requests)
	} else {
		m.f("**FAILED**: %d duplicates, %d order violations, %d IDs out of range", r.Totals.Duplicates, r.Totals.OrderViolations, r.Totals.OutOfRange)
		if len(r.Unknown) > 0 {
			m.f(", ops for namespaces the checker was not told about: %s", unknown(r.Unknown))
		}
		m.f(".\n\n")
	}
	m.f("Run from %s for %s; flurry node restarts: %d.\n\n", r.Start.UTC().Format(time.RFC3339), dur(r.End.Sub(r.Start)), len(r.Restarts))

	m.f("### Namespaces\n\n")
	m.f("| namespace | kind | requests | answered | IDs | duplicates | order violations | out of range | longest gap without an ID |\n")
	m.f("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, n := range r.Namespaces {
		m.f("| %s | %s | %d | %s | %d | %d | %d | %d | %s |\n", n.Name, n.Kind, n.Requests, pct(n.Counts), n.IDs, n.Duplicates, n.OrderViolations, n.OutOfRange, m.gap(n.Gap))
	}
	m.f("| **all** | | %d | %s | %d | %d | %d | %d | |\n\n", r.Totals.Requests, pct(r.Totals), r.Totals.IDs, r.Totals.Duplicates, r.Totals.OrderViolations, r.Totals.OutOfRange)
	m.f("Duplicates are counted per namespace over every ID any client received. Order: inside an op IDs strictly increase; " +
		"an op answered before another op to the same node was sent has only smaller IDs. ")
	m.f("That holds per node across restarts for snowflake and redis namespaces, and per node process lifetime for segment namespaces " +
		"(a restarted process starts a fresh range).")
	var unordered []string
	for _, n := range r.Namespaces {
		if n.Unordered > 0 {
			unordered = append(unordered, fmt.Sprintf("%s: %d", n.Name, n.Unordered))
		}
	}
	if len(unordered) > 0 {
		m.f(" Segment ops that spanned a restart of their node were compared with no other op (%s).", strings.Join(unordered, ", "))
	}
	m.f("\n\n")

	m.errors(r)
	m.nodes(r)
	m.anomalies(r)
	m.windows(r)
}

func unknown(u map[string]int64) string {
	var parts []string
	for name, n := range u {
		parts = append(parts, fmt.Sprintf("%q (%d ops)", name, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (m md) errors(r Result) {
	has := false
	for _, n := range r.Namespaces {
		has = has || len(n.Errors) > 0
	}
	if !has {
		return
	}
	m.f("### Failed requests by class\n\n| namespace | class | requests |\n|---|---|---:|\n")
	for _, n := range r.Namespaces {
		classes := make([]string, 0, len(n.Errors))
		for c := range n.Errors {
			classes = append(classes, c)
		}
		slices.Sort(classes)
		for _, c := range classes {
			m.f("| %s | %s | %d |\n", n.Name, c, n.Errors[c])
		}
	}
	m.f("\n")
}

func (m md) nodes(r Result) {
	m.f("### Nodes\n\n| namespace | node | lifetimes | requests | answered | IDs | anomalies | node values |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, n := range r.Namespaces {
		for _, nd := range n.Nodes {
			vals := strings.Join(nd.NodeValues, "; ")
			if vals == "" {
				vals = "–"
			}
			m.f("| %s | %s | %d | %d | %s | %d | %d | %s |\n", n.Name, nd.Node, nd.Lifetimes, nd.Requests, pct(nd.Counts), nd.IDs, nd.Anomalies(), vals)
		}
	}
	m.f("\n")
}

// opText describes an op in one line without all its IDs.
func (m md) opText(o Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s→%s %s–%s", o.Client, o.Node, m.at(o.Start), m.at(o.End))
	switch n := len(o.IDs); n {
	case 0:
	case 1:
		fmt.Fprintf(&b, ", ID %d", o.IDs[0])
	default:
		fmt.Fprintf(&b, ", %d IDs %d…%d", n, o.IDs[0], o.IDs[n-1])
	}
	if o.Err != "" {
		fmt.Fprintf(&b, ", error %s", o.Err)
	}
	return b.String()
}

func (m md) anomalies(r Result) {
	if r.Totals.Anomalies() == 0 {
		return
	}
	m.f("### Anomalies (up to %d examples of each)\n\n", MaxExamples)
	for _, n := range r.Namespaces {
		if n.Anomalies() == 0 {
			continue
		}
		m.f("#### %s\n\n", n.Name)
		for _, d := range n.DuplicateExamples {
			var ops []string
			for _, o := range d.Ops {
				ops = append(ops, m.opText(o))
			}
			m.f("- duplicate: ID %d received %d times: %s\n", d.ID, d.Count, strings.Join(ops, "; "))
		}
		if n.UnplacedDuplicates > 0 {
			m.f("- %d duplicates were not traced to their ops (too many distinct repeated IDs)\n", n.UnplacedDuplicates)
		}
		for _, v := range n.OrderExamples {
			if v.Within {
				m.f("- order on %s: %d then %d inside one op (%s)\n", v.Node, v.Prev, v.Next, m.opText(v.Earlier))
				continue
			}
			across := ""
			if v.AcrossRestart {
				across = ", across a restart of the node"
			}
			m.f("- order on %s: %d (%s) answered before %d was asked for (%s)%s\n", v.Node, v.Prev, m.opText(v.Earlier), v.Next, m.opText(v.Later), across)
		}
		for _, o := range n.OutOfRangeExamples {
			m.f("- out of range: ID %d: %s (%s)\n", o.ID, o.Reason, m.opText(o.Op))
		}
		m.f("\n")
	}
}

func (m md) windows(r Result) {
	if len(r.Windows) == 0 {
		return
	}
	m.f("### Faults\n\nA request counts in a fault's window when it was sent inside it; IDs, IDs/s and anomalies when they were received inside it. " +
		"The gap is the longest interval inside the window in which no node delivered an ID of the namespace.\n\n")
	for _, w := range r.Windows {
		m.f("#### %s (%s to %s, %s)\n\n", w.Name, m.at(w.Start), m.at(w.End), dur(w.End.Sub(w.Start)))
		m.f("| namespace | requests | answered | IDs | IDs/s | longest gap without an ID | duplicates | order violations | out of range |\n")
		m.f("|---|---:|---:|---:|---:|---|---:|---:|---:|\n")
		for _, n := range w.Namespaces {
			m.f("| %s | %d | %s | %d | %.0f | %s | %d | %d | %d |\n", n.Name, n.Requests, pct(n.Counts), n.IDs, n.IDsPerSecond, m.gap(n.Gap), n.Duplicates, n.OrderViolations, n.OutOfRange)
		}
		m.f("| **all** | %d | %s | %d | %.0f | | %d | %d | %d |\n\n", w.Requests, pct(w.Counts), w.IDs, w.IDsPerSecond, w.Duplicates, w.OrderViolations, w.OutOfRange)
	}
}

// Origin returns the instant that Throughput and Bands count X from: when the first
// op was sent (the zero time before any op). It equals [Result.Start].
func (c *Checker) Origin() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.origin()
}

func (c *Checker) origin() time.Time {
	if c.first == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.first)
}

// maxBuckets bounds the points of one Throughput series; a shorter bucket is
// lengthened to fit.
const maxBuckets = 100_000

// Throughput returns, per namespace in the order given to [New], the IDs received
// per second in buckets of the given length (one second if bucket <= 0), by when
// each op was answered: X is seconds since [Checker.Origin] at the middle of the
// bucket, Y is IDs/s. Buckets with no ID are present with Y=0, so an outage shows
// as a drop to zero.
func (c *Checker) Throughput(bucket time.Duration) []plot.Series {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bucket <= 0 {
		bucket = time.Second
	}
	var last int64
	for _, ns := range c.nss {
		for i := range ns.ops {
			last = max(last, ns.ops[i].end)
		}
	}
	span := last - c.first
	if c.first == 0 || span < 0 {
		span = 0
	}
	if span/int64(bucket) >= maxBuckets {
		bucket = time.Duration(span/maxBuckets + 1)
	}
	nb := int(span/int64(bucket)) + 1
	out := make([]plot.Series, 0, len(c.nss))
	for _, ns := range c.nss {
		counts := make([]int64, nb)
		for i := range ns.ops {
			r := &ns.ops[i]
			if r.n > 0 {
				counts[(r.end-c.first)/int64(bucket)] += int64(r.n)
			}
		}
		s := plot.Series{Name: ns.Name, Points: make([]plot.Point, nb)}
		for b, n := range counts {
			s.Points[b] = plot.Point{
				X: (time.Duration(b)*bucket + bucket/2).Seconds(),
				Y: float64(n) / bucket.Seconds(),
			}
		}
		out = append(out, s)
	}
	return out
}

// Bands turns fault windows into shaded bands of a chart whose X axis is seconds
// since [Checker.Origin], as Throughput's is.
func (c *Checker) Bands(windows []Window) []plot.Band {
	o := c.Origin()
	out := make([]plot.Band, 0, len(windows))
	for _, w := range windows {
		out = append(out, plot.Band{From: w.Start.Sub(o).Seconds(), To: w.End.Sub(o).Seconds(), Label: w.Name})
	}
	return out
}
