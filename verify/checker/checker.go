package checker

import (
	"fmt"
	"sync"
	"time"

	"github.com/flurryid/flurry/layout"
)

// Op is one request a client made and what came back.
type Op struct {
	// Client is the client host that made the request, e.g. "c1".
	Client string
	// Node is the flurry node the request went to, e.g. "n2".
	Node string
	// Namespace is the flurry namespace asked.
	Namespace string
	// Start is when the request was sent and End when its answer (or error) came
	// back. All hosts of a harness share one machine clock, so times of different
	// clients compare. Both must be set; an End before Start is taken as Start.
	Start, End time.Time
	// IDs are the IDs received, in the order received; empty on error.
	IDs []int64
	// Err is "" when the request was answered, else a short class of the failure:
	// "503", "timeout", "refused", ... IDs of an op with an error are still checked.
	Err string
	// Asked, when set and before Start, is when the node was asked for the op's IDs:
	// a client that buffers IDs hands them out (Start to End) after it fetched them.
	// Per-node order and process lifetimes are then judged from Asked to End: an op
	// is compared with the ops answered before its IDs were asked for. Zero means
	// Start.
	Asked time.Time
	// NoAvailability leaves the op out of the availability figures (Requests,
	// Answered, the error classes, the gaps) while its IDs are counted and checked
	// like any other: for ops that are not requests of the measured workload, such
	// as a probe of a restarted node or the grouped calls of a client that buffers
	// IDs, whose availability its caller reports itself.
	NoAvailability bool
}

// Kind is the strategy of a namespace; it decides which checks apply.
type Kind int

const (
	// Snowflake IDs carry a layout: range checked against it, monotonic per node
	// across restarts.
	Snowflake Kind = iota + 1
	// Segment IDs are plain positive integers from ranges: monotonic per node
	// process lifetime only.
	Segment
	// Redis IDs (package redisgen) carry a layout and are checked as Snowflake.
	Redis
)

// String returns "snowflake", "segment" or "redis".
func (k Kind) String() string {
	switch k {
	case Snowflake:
		return "snowflake"
	case Segment:
		return "segment"
	case Redis:
		return "redis"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// acrossRestarts reports whether per-node order must hold across a node's restarts.
func (k Kind) acrossRestarts() bool { return k != Segment }

// Namespace describes one namespace whose ops the checker receives.
type Namespace struct {
	Name string
	Kind Kind
	// Layout is the namespace's layout for snowflake and redis namespaces: IDs are
	// range-checked and decoded with it. Nil for segment namespaces, whose IDs
	// need only be positive. A snowflake or redis namespace with a nil Layout is
	// checked as positive only.
	Layout *layout.Layout
	// MaxAhead, when positive, also counts as out of range an ID whose time field
	// is more than MaxAhead after the op's End: a node far ahead of the others
	// (clock skew) or a corrupted time field. Zero does not check it; set it above
	// any skew the run injects plus the generator's allowed drift.
	MaxAhead time.Duration
}

// Window is the interval in which one fault was active.
type Window struct {
	Name       string
	Start, End time.Time
}

// Restart records that a node's process was (re)started at At. Segment namespaces
// split a node's ops into lifetimes at these instants.
type Restart struct {
	Node string
	At   time.Time
}

// MaxExamples is how many concrete examples of each kind of anomaly a
// [NamespaceResult] keeps.
const MaxExamples = 5

// Checker collects ops and restarts and checks them. Add and Restarted are safe for
// concurrent use; Check holds them off while it runs.
type Checker struct {
	mu       sync.Mutex
	nss      []*nsData
	byName   map[string]int
	nodes    names // node names, shared by all namespaces
	clients  names
	errs     names
	restarts []Restart
	unknown  map[string]int64 // ops for namespaces not given to New
	first    int64            // earliest op Start, unix ns; 0 before the first op
}

// New returns a checker for the given namespaces. Ops for other namespaces are
// counted in [Result.Unknown] and make the result not OK.
func New(nss []Namespace) *Checker {
	c := &Checker{byName: map[string]int{}, unknown: map[string]int64{}}
	c.errs.id("") // errs.list[0] means "answered"
	for _, ns := range nss {
		if _, dup := c.byName[ns.Name]; dup {
			continue
		}
		c.byName[ns.Name] = len(c.nss)
		c.nss = append(c.nss, &nsData{Namespace: ns})
	}
	return c
}
