package bitcodec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/layout"
)

func codec(t *testing.T, text string) *bitcodec.Codec {
	t.Helper()
	l, err := layout.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
}

func TestPositions(t *testing.T) {
	// sonyflake puts the sequence above the machine: time 39 | seq 8 | machine 16.
	c := codec(t, "sonyflake")
	if c.Bits != 63 || c.TimeBits != 39 || c.TimeShift != 24 || c.SeqBits != 8 || c.SeqShift != 16 ||
		len(c.Nodes) != 1 || c.Nodes[0] != (bitcodec.NodeField{Name: "machine", Bits: 16, Shift: 0}) || c.NodeBits != 16 {
		t.Errorf("sonyflake codec %+v", c)
	}
	if c.MaxTick() != 1<<39-1 || c.MaxSequence() != 255 || c.UnitMs != 10 {
		t.Errorf("limits %d %d %d", c.MaxTick(), c.MaxSequence(), c.UnitMs)
	}
	tw := codec(t, "twitter")
	if tw.TimeShift != 22 || tw.SeqShift != 0 || tw.Nodes[0].Shift != 17 || tw.Nodes[1].Shift != 12 {
		t.Errorf("twitter codec %+v", tw)
	}
}

func TestComposeSplit(t *testing.T) {
	c := codec(t, "twitter")
	mask, err := c.NodeMask([bitcodec.MaxNodes]int64{3, 17})
	if err != nil {
		t.Fatal(err)
	}
	v := c.Compose(123456, mask, 4095)
	if v != 123456<<22|3<<17|17<<12|4095 {
		t.Errorf("Compose = %d", v)
	}
	tick, nodes, seq := c.Split(v)
	if tick != 123456 || nodes != [bitcodec.MaxNodes]int64{3, 17} || seq != 4095 {
		t.Errorf("Split = %d %v %d", tick, nodes, seq)
	}
}

func TestNodeMaskErrors(t *testing.T) {
	c := codec(t, "twitter")
	for _, tc := range []struct {
		nv   [bitcodec.MaxNodes]int64
		want string
	}{
		{[bitcodec.MaxNodes]int64{0, 32}, "worker 32 does not fit in 5 bits (0..31)"},
		{[bitcodec.MaxNodes]int64{-1}, "datacenter -1 does not fit in 5 bits (0..31)"},
		{[bitcodec.MaxNodes]int64{0, 0, 5}, "node value 5 given at position 3, but the layout has 2 node fields"},
	} {
		if _, err := c.NodeMask(tc.nv); !errors.Is(err, layout.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NodeMask(%v) = %v, want %q", tc.nv, err, tc.want)
		}
	}
}

func TestTicks(t *testing.T) {
	c := codec(t, "sonyflake") // 10 ms ticks
	e := c.EpochMs * 1e6
	for _, tc := range []struct {
		ns   int64
		want int64
	}{{e, 0}, {e + 9_999_999, 0}, {e + 10_000_000, 1}, {e - 1, -1}, {e - 10_000_000, -1}, {e - 10_000_001, -2}} {
		if got := c.TickAt(tc.ns); got != tc.want {
			t.Errorf("TickAt(epoch%+d) = %d, want %d", tc.ns-e, got, tc.want)
		}
	}
	if got := c.TickStartMs(3); got != c.EpochMs+30 {
		t.Errorf("TickStartMs(3) = %d", got)
	}
	// Before 1970 the division floors too: -1 ns is in the millisecond before 0.
	u := codec(t, "time:41:1ms:1970-01-01T00:00:00Z,worker:10,seq:12")
	if got := u.TickAt(-1); got != -1 {
		t.Errorf("TickAt(-1ns) = %d, want -1", got)
	}
}

func TestShape(t *testing.T) {
	if codec(t, "twitter").Shape() != codec(t, "leaf").Shape() {
		t.Error("twitter and leaf place the same bits but have different shapes")
	}
	if codec(t, "twitter").Shape() == codec(t, "discord").Shape() {
		t.Error("twitter and discord differ in epoch but share a shape")
	}
	if codec(t, "twitter").Shape() == codec(t, "time:41:1ms:2010-11-04T01:42:54.657Z,worker:5,datacenter:4,seq:13").Shape() {
		t.Error("layouts with different sequence widths share a shape")
	}
}
