package checker

import (
	"fmt"
	"strings"
	"time"
)

// Counts are the totals of a run, a namespace, a node or a window.
type Counts struct {
	// Requests is the number of ops (leaving out those marked NoAvailability);
	// Answered those with no error.
	Requests, Answered int64
	// IDs is the number of IDs received.
	IDs int64
	// Duplicates counts every receipt of an ID after its first, in one namespace.
	Duplicates int64
	// OrderViolations counts adjacent IDs of one op that do not strictly increase,
	// plus ops whose smallest ID is not above every ID of an op to the same node
	// (and, for segment namespaces, process lifetime) answered before it was sent.
	OrderViolations int64
	// OutOfRange counts IDs outside their namespace's layout (or not positive).
	OutOfRange int64
}

// Availability returns the fraction of requests answered, or 0 when there was none.
func (c Counts) Availability() float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.Answered) / float64(c.Requests)
}

// Anomalies returns the number of duplicates, order violations and out-of-range IDs.
func (c Counts) Anomalies() int64 { return c.Duplicates + c.OrderViolations + c.OutOfRange }

func (c *Counts) add(o Counts) {
	c.Requests += o.Requests
	c.Answered += o.Answered
	c.IDs += o.IDs
	c.Duplicates += o.Duplicates
	c.OrderViolations += o.OrderViolations
	c.OutOfRange += o.OutOfRange
}

// Gap is the longest interval in which no op delivered an ID: between two
// deliveries, or between the start of the observed interval (the run or a window)
// and the first delivery, or the last delivery and its end.
type Gap struct {
	From, To time.Time
}

// Duration returns To - From.
func (g Gap) Duration() time.Duration { return g.To.Sub(g.From) }

// Duplicate is an ID received more than once in a namespace.
type Duplicate struct {
	ID int64
	// Count is how many times it was received (at least 2).
	Count int
	// Ops are up to four of the ops that returned it, earliest answered first.
	Ops []Op
}

// OrderViolation is a pair of IDs of one node received out of order.
type OrderViolation struct {
	Node string
	// Within is true when both IDs came in one op (Earlier and Later are then the
	// same op), false when Earlier was answered before Later was sent.
	Within bool
	// Prev came first but is not below Next: for ops, Prev is Earlier's largest
	// ID and Next is Later's smallest.
	Prev, Next     int64
	Earlier, Later Op
	// AcrossRestart is true when a restart of Node falls between Earlier's end and
	// Later's start (only possible for snowflake and redis namespaces).
	AcrossRestart bool
}

// OutOfRange is an ID outside its namespace's layout.
type OutOfRange struct {
	ID int64
	// Reason says which check failed, e.g. "not positive" or "bits above the
	// 63-bit layout".
	Reason string
	Op     Op
}

// NodeResult is what one node did for one namespace.
type NodeResult struct {
	Node string
	Counts
	// Lifetimes is the number of process lifetimes seen: 1 plus the node's restarts
	// inside the run (restarts before the first op do not count).
	Lifetimes int
	// NodeValues lists the layout node values its IDs carried, in the layout's
	// "name=value,..." form, in order of first receipt (snowflake and redis
	// namespaces; at most 16).
	NodeValues []string
}

// NamespaceResult is the outcome for one namespace over the whole run.
type NamespaceResult struct {
	Name string
	Kind Kind
	Counts
	// Errors counts failed ops by their Err class.
	Errors map[string]int64
	// Gap is the longest interval of the run with no ID from any node.
	Gap Gap
	// OrderScope says over what per-node order was checked: "per node, across
	// restarts" or "per node process lifetime".
	OrderScope string
	// Unordered counts ops with IDs that were compared with no other op because
	// they span a restart of their node (segment namespaces only).
	Unordered int64
	// UnplacedDuplicates counts duplicates that are in Duplicates but were not
	// traced back to their ops (so not to a window or node) because more than a
	// million distinct IDs repeated.
	UnplacedDuplicates int64
	// Nodes breaks the counts down by node, sorted by name.
	Nodes []NodeResult

	// Up to MaxExamples examples of each anomaly.
	DuplicateExamples  []Duplicate
	OrderExamples      []OrderViolation
	OutOfRangeExamples []OutOfRange
}

// WindowNamespace is one namespace's part of a fault window.
type WindowNamespace struct {
	Name string
	Counts
	// IDsPerSecond is IDs divided by the window's length.
	IDsPerSecond float64
	// Gap is the longest interval inside the window with no ID from any node.
	Gap Gap
}

// WindowResult is the outcome inside one fault window. An op counts as a request
// of the window when it was sent inside it; its IDs and any anomaly it shows count
// when it was answered inside it.
type WindowResult struct {
	Window
	Counts
	IDsPerSecond float64
	Namespaces   []WindowNamespace
}

// Result is the outcome of [Checker.Check].
type Result struct {
	// Start is when the first op was sent and End when the last was answered.
	Start, End time.Time
	// Totals sums all namespaces.
	Totals     Counts
	Namespaces []NamespaceResult
	Windows    []WindowResult
	// Restarts are those given to [Checker.Restarted], in time order.
	Restarts []Restart
	// Unknown counts ops for namespaces that were not given to [New], by name.
	Unknown map[string]int64
}

// OK reports whether the run showed no anomaly and every op named a known
// namespace.
func (r Result) OK() bool { return r.Totals.Anomalies() == 0 && len(r.Unknown) == 0 }

// Summary returns the verdict in one line, for a test failure or a log: the
// totals and, when not OK, the first example of each kind of anomaly.
func (r Result) Summary() string {
	t := r.Totals
	var b strings.Builder
	if r.OK() {
		b.WriteString("OK: ")
	} else {
		b.WriteString("FAILED: ")
	}
	fmt.Fprintf(&b, "%d IDs in %d requests (%.2f%% answered), %d duplicates, %d order violations, %d out of range",
		t.IDs, t.Requests, 100*t.Availability(), t.Duplicates, t.OrderViolations, t.OutOfRange)
	if len(r.Unknown) > 0 {
		fmt.Fprintf(&b, ", ops for unknown namespaces: %s", unknown(r.Unknown))
	}
	for _, ns := range r.Namespaces {
		if len(ns.DuplicateExamples) > 0 {
			d := ns.DuplicateExamples[0]
			fmt.Fprintf(&b, "; %s: ID %d received %d times", ns.Name, d.ID, d.Count)
		}
		if len(ns.OrderExamples) > 0 {
			v := ns.OrderExamples[0]
			fmt.Fprintf(&b, "; %s: %d then %d on %s", ns.Name, v.Prev, v.Next, v.Node)
		}
		if len(ns.OutOfRangeExamples) > 0 {
			o := ns.OutOfRangeExamples[0]
			fmt.Fprintf(&b, "; %s: ID %d %s", ns.Name, o.ID, o.Reason)
		}
	}
	return b.String()
}
