package indb_test

import (
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
)

// fuzzLayout builds a layout from fuzz numbers: a time field of 20 to 45 bits in
// 1 ms, 10 ms or 1 s, up to three node fields, a sequence field of 1 to 16 bits
// above, between or below them, and an epoch that leaves the clock inside the
// time field. It returns nil for combinations wider than 63 bits.
func fuzzLayout(timeBits, unitSel, nodes, seqBits, seqPos uint8, nodeBits uint32, now time.Time) *layout.Layout {
	units := []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}
	unit := units[int(unitSel)%len(units)]
	tb := 20 + int(timeBits)%26
	fields := []layout.Field{{Kind: layout.Time, Bits: tb}}
	var rest []layout.Field
	for i := 0; i < int(nodes)%4; i++ {
		rest = append(rest, layout.Field{Name: fmt.Sprintf("n%d", i), Kind: layout.Node, Bits: 1 + int(nodeBits>>(8*i)&0xff)%12})
	}
	seq := layout.Field{Kind: layout.Sequence, Bits: 1 + int(seqBits)%16}
	pos := int(seqPos) % (len(rest) + 1)
	rest = append(rest[:pos], append([]layout.Field{seq}, rest[pos:]...)...)
	fields = append(fields, rest...)
	total := 0
	for _, f := range fields {
		total += f.Bits
	}
	if total > 63 {
		return nil
	}
	// The clock sits a quarter into the time field's span, within the last ten years.
	span := time.Duration(min(int64(1)<<tb*int64(unit), int64(40*365*24*time.Hour)))
	epoch := now.Add(-span / 4).Truncate(time.Second)
	l, err := layout.New(layout.Spec{Fields: fields, Unit: unit, Epoch: epoch})
	if err != nil {
		return nil
	}
	return l
}

// FuzzEmit emits the function for random layouts and node values, runs it on
// PostgreSQL and MariaDB and compares its IDs with layout.Compose of the tick and
// sequence value the counter state gives (PostgreSQL: the counter's slot; MariaDB:
// the claimed tick and the call's number less its base): the same bits, field by
// field.
func FuzzEmit(f *testing.F) {
	f.Add(uint8(21), uint8(0), uint8(1), uint8(9), uint8(1), uint32(12), uint64(5))        // instagram-like
	f.Add(uint8(19), uint8(1), uint8(1), uint8(7), uint8(0), uint32(15), uint64(40000))    // sonyflake-like: seq above the node
	f.Add(uint8(15), uint8(0), uint8(3), uint8(11), uint8(2), uint32(0x040404), uint64(7)) // three node fields
	f.Add(uint8(8), uint8(2), uint8(0), uint8(12), uint8(0), uint32(0), uint64(0))         // seconds, no node field
	f.Add(uint8(0), uint8(0), uint8(2), uint8(0), uint8(1), uint32(0x0b0b), uint64(1<<30)) // 1-bit sequence between nodes
	dbs := map[indb.Engine]*sql.DB{}
	for _, e := range engines {
		_, dbs[e] = freshDB(f, e)
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, timeBits, unitSel, nodes, seqBits, seqPos uint8, nodeBits uint32, nodeSeed uint64) {
		l := fuzzLayout(timeBits, unitSel, nodes, seqBits, seqPos, nodeBits, time.Now())
		if l == nil {
			t.Skip("wider than 63 bits")
		}
		var nv layout.NodeValues
		seed := nodeSeed
		for i, fl := range l.NodeFields() {
			nv[i] = int64(seed & (1<<fl.Bits - 1))
			seed >>= fl.Bits
		}
		for _, e := range engines {
			db := dbs[e]
			fn := fmt.Sprintf("fz%d", n.Add(1))
			s, err := indb.Emit(indb.Options{Engine: e, Layout: l, Node: nv, Function: fn})
			if err != nil {
				t.Fatalf("Emit(%s): %v", l, err)
			}
			for _, st := range s.Install {
				if _, err := db.ExecContext(ctx(t), st); err != nil {
					t.Fatalf("%s %s: %v\n%s", e, l, err, st)
				}
			}
			c, err := db.Conn(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			ids := next(t, c, fn, 3)
			in, err := indb.Read(ctx(t), db, e, "", fn)
			if err != nil {
				t.Fatal(err)
			}
			var sb uint
			for _, fl := range l.Fields() {
				if fl.Kind == layout.Sequence {
					sb = uint(fl.Bits)
				}
			}
			// PostgreSQL: the counter's last slot is the last ID's. MariaDB: the last
			// ID is the claimed tick's with this session's last call number less the
			// tick's base, and the reservation covers the tick.
			tick, seq := in.Counter>>sb, in.Counter&(1<<sb-1)
			if e == indb.MariaDB {
				if err := c.QueryRowContext(ctx(t), "SELECT tick, LASTVAL("+fn+"_seq) - base FROM "+fn+"_tick WHERE id = 1").Scan(&tick, &seq); err != nil {
					t.Fatal(err)
				}
				if in.Counter>>sb < tick {
					t.Errorf("%s: the reservation ends at tick %d, before the claimed tick %d", l, in.Counter>>sb, tick)
				}
			}
			c.Close()
			checkIDs(t, l, nv, ids)
			want, err := l.Compose(layout.Parts{Tick: tick, Nodes: nv, Sequence: seq})
			if err != nil || ids[2] != want {
				t.Errorf("%s %s node %v: the last ID is %d; layout.Compose of tick %d and sequence value %d gives %d (%v)", e, l, nv, ids[2], tick, seq, want, err)
			}
			if now, got := time.Now(), l.TimeOf(ids[2]); got.After(now) || now.Sub(got) > time.Minute+l.Unit() {
				t.Errorf("%s %s: the last ID's time is %s at %s", e, l, got, now)
			}
			for _, st := range s.Uninstall {
				if _, err := db.ExecContext(ctx(t), st); err != nil {
					t.Fatalf("%s: %v", st, err)
				}
			}
		}
	})
}
