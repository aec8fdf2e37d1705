package layout

import (
	"testing"

	"github.com/flurryid/flurry"
)

func FuzzParse(f *testing.F) {
	for _, p := range Presets() {
		f.Add(p.String())
		f.Add(p.Name())
	}
	f.Add("time:41:1ms:1288834974657,worker:10,seq:12")
	f.Add("time:30:1m0s:2020-02-29T12:00:00+08:00,sequence:20")
	f.Add("time::1ms:,seq:")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		if l.Bits() > MaxBits || l.Bits() < 2 {
			t.Fatalf("%q parsed to a %d-bit layout", s, l.Bits())
		}
		back, err := Parse(l.String())
		if err != nil || !back.Equal(l) || back.String() != l.String() {
			t.Fatalf("%q -> %q does not round-trip: %v", s, l.String(), err)
		}
	})
}

func FuzzDecompose(f *testing.F) {
	presets := Presets()
	f.Add(uint8(0), int64(175928847299117063))
	f.Add(uint8(3), int64(-1))
	f.Add(uint8(7), int64(1)<<62)
	f.Fuzz(func(t *testing.T, which uint8, v int64) {
		l := presets[int(which)%len(presets)]
		p, err := l.Decompose(flurry.ID(v))
		if err != nil {
			if v >= 0 && uint64(v)>>l.Bits() == 0 {
				t.Fatalf("%s: valid ID %d refused: %v", l.Name(), v, err)
			}
			return
		}
		id, err := l.Compose(p)
		if err != nil || int64(id) != v {
			t.Fatalf("%s: %d -> %+v -> %d, %v", l.Name(), v, p, id, err)
		}
		if _, err := l.Decode(id); err != nil {
			t.Fatal(err)
		}
		lo, hi, err := l.Bounds(l.TimeOf(id), l.TimeOf(id))
		if err != nil || id < lo || id > hi {
			t.Fatalf("%s: %d outside the bounds of its own tick [%d, %d]: %v", l.Name(), id, lo, hi, err)
		}
	})
}

func FuzzParseNodeValues(f *testing.F) {
	l, _ := Lookup("gameserver")
	f.Add("platform=1,area=2000,app=31")
	f.Add("app=-1")
	f.Fuzz(func(t *testing.T, s string) {
		nv, err := l.ParseNodeValues(s)
		if err != nil {
			return
		}
		if err := l.CheckNodeValues(nv); err != nil {
			t.Fatalf("%q accepted but out of range: %v", s, err)
		}
		back, err := l.ParseNodeValues(l.FormatNodeValues(nv))
		if err != nil || back != nv {
			t.Fatalf("%q -> %v does not round-trip", s, nv)
		}
	})
}
