package layout

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Requirements are what a layout must serve, for [Plan].
type Requirements struct {
	// Years is how long IDs must be issued from the epoch on. Must be positive.
	Years float64
	// Rate is the peak number of IDs one node issues per second. Must be positive.
	Rate float64
	// Nodes lists the node fields and how many distinct values each must hold, most
	// significant first, e.g. datacenter 4, machine 100, line 10. Empty means one
	// field "node" with 1024 values.
	Nodes []NodeNeed
	// Unit is the tick length. Zero means one millisecond.
	Unit time.Duration
	// Epoch is where time starts. The zero Epoch means the start of the current UTC day.
	Epoch time.Time
	// JSSafe asks for IDs that stay below 2^53 (53 bits in all) for JavaScript clients.
	JSSafe bool
}

// NodeNeed is one node field of [Requirements].
type NodeNeed struct {
	Name  string
	Count uint64
}

// Proposal is Plan's answer.
type Proposal struct {
	Layout *Layout
	// Spare is the number of bits left over after every requirement was met. Plan
	// gives them to the time field until the layout lasts twice the years asked, and
	// the rest to the sequence field (rate headroom).
	Spare int
	// Reasoning explains each field's width in one line per field.
	Reasoning []string
}

// bitsFor returns the bits needed to hold n distinct values (at least 1).
func bitsFor(n uint64) int {
	if n <= 2 {
		return 1
	}
	return bits.Len64(n - 1)
}

// Plan proposes the layout that meets req with the fewest bits, giving spare bits to
// the time field until it lasts twice the years asked and the rest to the sequence
// field, the reasoning a layout sized by hand follows: years of life fix the time
// bits, the peak rate per tick fixes the sequence bits, the node counts fix the node
// bits. When the sum exceeds the budget (63 bits, or 53 with JSSafe), the error wraps
// [ErrDoesNotFit] and says, for each requirement, what it costs and how far it would
// have to shrink for the rest to fit.
func Plan(req Requirements) (*Proposal, error) {
	return plan(req, time.Now())
}

func plan(req Requirements, now time.Time) (*Proposal, error) {
	unit := req.Unit
	if unit == 0 {
		unit = time.Millisecond
	}
	if unit < time.Millisecond || unit%time.Millisecond != 0 {
		return nil, fmt.Errorf("%w: unit %v is not a whole positive number of milliseconds", ErrInvalid, req.Unit)
	}
	if !(req.Years > 0) || req.Years > 10000 {
		return nil, fmt.Errorf("%w: years %v must be more than 0 and at most 10000", ErrInvalid, req.Years)
	}
	if !(req.Rate > 0) || req.Rate > 1e15 {
		return nil, fmt.Errorf("%w: rate %v IDs/s per node must be more than 0", ErrInvalid, req.Rate)
	}
	nodes := req.Nodes
	if len(nodes) == 0 {
		nodes = []NodeNeed{{Name: "node", Count: 1024}}
	}
	epoch := req.Epoch
	if epoch.IsZero() {
		epoch = now.UTC().Truncate(24 * time.Hour)
	}
	budget := MaxBits
	if req.JSSafe {
		budget = 53
	}

	ticks := req.Years * 365.25 * 24 * 3600 * float64(time.Second) / float64(unit)
	timeBits := max(1, int(math.Ceil(math.Log2(ticks))))
	perTick := math.Ceil(req.Rate * float64(unit) / float64(time.Second))
	seqBits := int(math.Ceil(math.Log2(perTick)))
	if seqBits < 1 {
		seqBits = 1
	}
	nodeBits := 0
	var reasons []string
	reasons = append(reasons, fmt.Sprintf("time: %d bits of %s hold %.0f ticks, %.1f years (%.3g ticks needed for %g years)",
		timeBits, formatUnit(unit), math.Ldexp(1, timeBits), math.Ldexp(1, timeBits)*unit.Seconds()/(365.25*86400), ticks, req.Years))
	var nodeParts []string
	for _, n := range nodes {
		if n.Count == 0 {
			return nil, fmt.Errorf("%w: node field %q needs a count of at least 1", ErrInvalid, n.Name)
		}
		b := bitsFor(n.Count)
		nodeBits += b
		nodeParts = append(nodeParts, fmt.Sprintf("%s %d", n.Name, b))
		reasons = append(reasons, fmt.Sprintf("%s: %d bits hold %d values (%d needed)", n.Name, b, uint64(1)<<b, n.Count))
	}
	reasons = append(reasons, fmt.Sprintf("seq: %d bits hold %d IDs per %s tick, %.0f IDs/s per node (%.0f per tick needed for %g/s)",
		seqBits, 1<<seqBits, formatUnit(unit), math.Ldexp(1, seqBits)*float64(time.Second)/float64(unit), perTick, req.Rate))

	total := timeBits + nodeBits + seqBits
	if total > budget {
		over := total - budget
		var fixes []string
		if timeBits-over >= 1 {
			fixes = append(fixes, "a life of at most "+span(math.Ldexp(1, timeBits-over)*unit.Seconds()))
		}
		if seqBits-over >= 1 {
			fixes = append(fixes, fmt.Sprintf("a peak of at most %.0f IDs/s per node", math.Ldexp(1, seqBits-over)*float64(time.Second)/float64(unit)))
		} else {
			fixes = append(fixes, fmt.Sprintf("a peak of at most %.0f IDs/s per node", float64(time.Second)/float64(unit)))
		}
		if nodeBits-over >= len(nodes) {
			fixes = append(fixes, fmt.Sprintf("at most %d nodes in all", uint64(1)<<(nodeBits-over)))
		}
		return nil, fmt.Errorf("%w: %d bits needed (time %d + %s + seq %d) but %d fit, %d too many; any one of these would fit: %s",
			ErrDoesNotFit, total, timeBits, strings.Join(nodeParts, " + "), seqBits, budget, over, strings.Join(fixes, "; "))
	}
	// Spare bits: time first, until the layout lasts twice the years asked (a
	// system outlives its plan, and a margin costs one bit); the rest to the
	// sequence, since a burst or a peak that grows is what a layout with years to
	// spare runs out of first. Every spare bit to time would buy centuries and leave
	// the rate asked with as little as a few percent of headroom.
	spare := budget - total
	toTime := 0
	for toTime < spare && math.Ldexp(1, timeBits+toTime) < 2*ticks {
		toTime++
	}
	toSeq := spare - toTime
	timeBits += toTime
	seqBits += toSeq
	if toTime > 0 {
		reasons = append(reasons, fmt.Sprintf("spare: %s to time, for a lifetime of at least twice the %g years asked (until %s)", nBits(toTime), req.Years, "%LIFE%"))
	}
	if toSeq > 0 {
		perSec := math.Ldexp(1, seqBits) * float64(time.Second) / float64(unit)
		reasons = append(reasons, fmt.Sprintf("spare: %s to seq, for %.0f IDs/s per node, %.3gx the peak asked: room for bursts and growth", nBits(toSeq), perSec, perSec/req.Rate))
	}
	spec := Spec{Unit: unit, Epoch: epoch, Fields: []Field{{Name: "time", Kind: Time, Bits: timeBits}}}
	for _, n := range nodes {
		spec.Fields = append(spec.Fields, Field{Name: n.Name, Kind: Node, Bits: bitsFor(n.Count)})
	}
	spec.Fields = append(spec.Fields, Field{Name: "seq", Kind: Sequence, Bits: seqBits})
	l, err := build(spec, now)
	if err != nil {
		return nil, err
	}
	for i, r := range reasons {
		reasons[i] = strings.Replace(r, "%LIFE%", l.Lifetime().Format("2006-01-02"), 1)
	}
	return &Proposal{Layout: l, Spare: spare, Reasoning: reasons}, nil
}

// nBits writes "1 bit" or "n bits".
func nBits(n int) string {
	if n == 1 {
		return "1 bit"
	}
	return strconv.Itoa(n) + " bits"
}

// span writes a number of seconds in the largest unit that keeps it at least 1.
func span(sec float64) string {
	switch {
	case sec >= 365.25*86400:
		return fmt.Sprintf("%.3g years", sec/(365.25*86400))
	case sec >= 86400:
		return fmt.Sprintf("%.3g days", sec/86400)
	case sec >= 3600:
		return fmt.Sprintf("%.3g hours", sec/3600)
	}
	return fmt.Sprintf("%.3g seconds", sec)
}
