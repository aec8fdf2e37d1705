// Package bitcodec is the bit arithmetic of a flurry layout: where each field sits
// in an int64, the largest value of each, and how instants map to ticks.
//
// Package layout validates layouts and owns the public API (compose, decompose,
// bounds, text); it keeps its positions in a Codec. Package snowflake reads the
// positions for its lock-free state and redisgen bakes them into its Lua script;
// both build their own Codec from the layout's public description with New, so no
// public method of layout exists only for them.
//
// Nothing here validates a layout: New trusts that package layout did.
package bitcodec

import (
	"fmt"
	"strings"
	"time"
)

// MaxNodes is the number of node fields a Codec can hold. It equals
// layout.MaxNodeFields: layout passes its NodeValues (an array of that length) to
// NodeMask, which does not compile when the two differ.
const MaxNodes = 8

// Kind tells what a field holds. The values are those of layout.Kind.
type Kind uint8

// The kinds of field, numbered as layout numbers them.
const (
	Time Kind = iota + 1
	Node
	Sequence
)

// NodeField is one node field: its name, width and the bit position of its lowest bit.
type NodeField struct {
	Name  string
	Bits  uint
	Shift uint
}

// Codec holds a layout's field positions. Its fields are set by New and must not be
// changed; a Codec is safe for concurrent use.
type Codec struct {
	// Bits is the number of bits all fields take (at most 63).
	Bits uint
	// TimeBits and TimeShift are the width and lowest bit of the time field;
	// SeqBits and SeqShift those of the sequence field.
	TimeBits, TimeShift uint
	SeqBits, SeqShift   uint
	// Nodes are the node fields, most significant first; NodeBits their total width.
	Nodes    []NodeField
	NodeBits uint
	// UnitMs is the tick length and EpochMs the epoch, both in milliseconds (Unix
	// milliseconds for the epoch).
	UnitMs, EpochMs int64

	invalid error // wrapped by NodeMask's errors
}

// New places fields, given most significant first, and returns their codec. unit
// and epoch are the layout's tick length and epoch; invalid is the sentinel
// NodeMask's errors wrap (layout.ErrInvalid).
//
// New takes any slice of structs shaped like layout.Field, so that it accepts
// layout.Field without importing package layout (which imports this package):
//
//	c := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
func New[K ~uint8, F ~struct {
	Name string
	Kind K
	Bits int
}](fields []F, unit time.Duration, epoch time.Time, invalid error) *Codec {
	c := &Codec{UnitMs: int64(unit / time.Millisecond), EpochMs: epoch.UnixMilli(), invalid: invalid}
	for _, f := range fields {
		c.Bits += uint(field[K](f).Bits)
	}
	shift := c.Bits
	for _, f := range fields {
		f := field[K](f)
		bits := uint(f.Bits)
		shift -= bits
		switch Kind(f.Kind) {
		case Time:
			c.TimeBits, c.TimeShift = bits, shift
		case Sequence:
			c.SeqBits, c.SeqShift = bits, shift
		case Node:
			c.Nodes = append(c.Nodes, NodeField{Name: f.Name, Bits: bits, Shift: shift})
			c.NodeBits += bits
		}
	}
	return c
}

// field is the shape of layout.Field, for New's conversions.
type field[K ~uint8] struct {
	Name string
	Kind K
	Bits int
}

// MaxTick returns the largest value of the time field.
func (c *Codec) MaxTick() int64 { return 1<<c.TimeBits - 1 }

// MaxSequence returns the largest value of the sequence field.
func (c *Codec) MaxSequence() int64 { return 1<<c.SeqBits - 1 }

// NodeMask returns the node values nv placed at their bit positions, ready to OR
// into an ID. It fails, wrapping the codec's invalid sentinel, when a value does not
// fit its field ("worker 40 does not fit in 5 bits (0..31)") or a value is given
// past the last node field.
func (c *Codec) NodeMask(nv [MaxNodes]int64) (int64, error) {
	var mask int64
	for i, v := range nv {
		if i >= len(c.Nodes) {
			if v != 0 {
				return 0, fmt.Errorf("%w: node value %d given at position %d, but the layout has %d node fields", c.invalid, v, i+1, len(c.Nodes))
			}
			continue
		}
		n := c.Nodes[i]
		if max := int64(1)<<n.Bits - 1; v < 0 || v > max {
			return 0, fmt.Errorf("%w: %s %d does not fit in %d bits (0..%d)", c.invalid, n.Name, v, n.Bits, max)
		}
		mask |= v << n.Shift
	}
	return mask, nil
}

// Compose places tick and seq and ORs in a node mask from NodeMask. It does not
// check ranges: tick must be in 0..MaxTick and seq in 0..MaxSequence.
func (c *Codec) Compose(tick, nodeMask, seq int64) int64 {
	return tick<<c.TimeShift | nodeMask | seq<<c.SeqShift
}

// Split takes v apart into its tick, node values and sequence. It does not check
// that v belongs to the layout: bits above Bits are ignored.
func (c *Codec) Split(v int64) (tick int64, nodes [MaxNodes]int64, seq int64) {
	tick = v >> c.TimeShift & c.MaxTick()
	seq = v >> c.SeqShift & c.MaxSequence()
	for i, n := range c.Nodes {
		nodes[i] = v >> n.Shift & (1<<n.Bits - 1)
	}
	return tick, nodes, seq
}

// TickOfMs returns the tick that contains the instant ms (Unix milliseconds): the
// floor of (ms - epoch) / unit, so negative before the epoch. It may exceed
// MaxTick after the layout's lifetime.
func (c *Codec) TickOfMs(ms int64) int64 {
	d := ms - c.EpochMs
	if d < 0 {
		return -((-d + c.UnitMs - 1) / c.UnitMs)
	}
	return d / c.UnitMs
}

// TickAt is TickOfMs for an instant in nanoseconds since the Unix epoch.
func (c *Codec) TickAt(unixNano int64) int64 {
	ms := unixNano / int64(time.Millisecond)
	if unixNano < 0 && unixNano%int64(time.Millisecond) != 0 {
		ms-- // floor, not truncation, before 1970
	}
	return c.TickOfMs(ms)
}

// TickStartMs returns the instant tick starts at, in Unix milliseconds.
func (c *Codec) TickStartMs(tick int64) int64 { return c.EpochMs + tick*c.UnitMs }

// Shape returns a key that is the same for two codecs exactly when they place the
// same bits at the same positions with the same unit and epoch, whatever the field
// names: Twitter's and Leaf's layouts have one shape. Two generators of one shape
// and one node value would issue the same IDs (snowflake's in-process guard).
func (c *Codec) Shape() string {
	var b strings.Builder
	var mask int64
	for _, n := range c.Nodes {
		mask |= (1<<n.Bits - 1) << n.Shift
	}
	fmt.Fprintf(&b, "t%d@%d/%dms/%d;s%d@%d;n%#x", c.TimeBits, c.TimeShift, c.UnitMs, c.EpochMs, c.SeqBits, c.SeqShift, mask)
	return b.String()
}
