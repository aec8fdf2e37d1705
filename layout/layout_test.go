package layout

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry"
)

func mustParse(t testing.TB, s string) *Layout {
	t.Helper()
	l, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return l
}

// Each preset pins one ID computed outside this package (by hand or from the
// original system's documentation) so that a change of width, order or epoch shows.
func TestPresetsPinnedIDs(t *testing.T) {
	for _, tc := range []struct {
		preset string
		id     flurry.ID
		tick   int64
		nodes  NodeValues
		seq    int64
		time   string // the tick's start, when known from the source
	}{
		// Discord's developer documentation decodes this ID.
		{"discord", 175928847299117063, 1462015105796 - 1420070400000, NodeValues{1, 0}, 7, "2016-04-30T11:18:25.796Z"},
		// Instagram's engineering blog example: 1387263000 ms, shard 1341, sequence 5001 % 1024.
		{"instagram", 11637205501277191, 1387263000, NodeValues{1341}, 7, ""},
		{"twitter", 4194304000466848, 1000000000, NodeValues{3, 17}, 4000, ""},
		{"leaf", 4194304002277280, 1000000000, NodeValues{555}, 4000, ""},
		{"sonyflake", 5033164813147200, 300000000, NodeValues{40000}, 200, ""},
		{"baidu", 6871947698176008000, 200000000, NodeValues{3000000}, 8000, ""},
		{"gameserver", 3355443200025069567, 100000000000, NodeValues{5, 2000, 31}, 63, ""},
		{"jssafe", 5242880000524287, 10000000000, NodeValues{63}, 8191, ""},
		{"mastodon", 111411200000065535, 1700000000000, NodeValues{}, 65535, "2023-11-14T22:13:20Z"},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			l := mustParse(t, tc.preset)
			if l.Name() != tc.preset {
				t.Errorf("Name() = %q", l.Name())
			}
			id, err := l.Compose(Parts{Tick: tc.tick, Nodes: tc.nodes, Sequence: tc.seq})
			if err != nil || id != tc.id {
				t.Fatalf("Compose = %d, %v; want %d", id, err, tc.id)
			}
			p, err := l.Decompose(tc.id)
			if err != nil || p != (Parts{Tick: tc.tick, Nodes: tc.nodes, Sequence: tc.seq}) {
				t.Fatalf("Decompose = %+v, %v", p, err)
			}
			if tc.time != "" {
				want, _ := time.Parse(time.RFC3339Nano, tc.time)
				if got := l.TimeOf(tc.id); !got.Equal(want) {
					t.Errorf("TimeOf = %v, want %v", got, want)
				}
			}
			if l.About() == "" {
				t.Error("preset has no description")
			}
		})
	}
}

func TestPresetWidthsAndEpochs(t *testing.T) {
	for _, tc := range []struct{ preset, text string }{
		{"twitter", "time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12"},
		{"leaf", "time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12"},
		{"sonyflake", "time:39:10ms:2014-09-01T00:00:00Z,seq:8,machine:16"},
		{"baidu", "time:28:1s:2016-05-19T16:00:00Z,worker:22,seq:13"},
		{"instagram", "time:40:1ms:2011-08-24T21:07:01.721Z,shard:13,seq:10"},
		{"discord", "time:41:1ms:2015-01-01T00:00:00Z,worker:5,process:5,seq:12"},
		{"gameserver", "time:38:1ms:2018-10-31T16:00:00Z,platform:3,area:11,app:5,seq:6"},
		{"jssafe", "time:34:100ms:2025-01-01T00:00:00Z,worker:6,seq:13"},
		{"mastodon", "time:47:1ms:1970-01-01T00:00:00Z,seq:16"},
	} {
		if got := mustParse(t, tc.preset).String(); got != tc.text {
			t.Errorf("%s = %s, want %s", tc.preset, got, tc.text)
		}
	}
	if got, want := len(Presets()), 9; got != want {
		t.Errorf("%d presets, want %d", got, want)
	}
}

func TestFacts(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	baidu := mustParse(t, "baidu")
	if got := baidu.Lifetime(); !got.Equal(time.Date(2024, 11, 20, 13, 24, 16, 0, time.UTC)) {
		t.Errorf("baidu lifetime %v, want 2024-11-20T13:24:16Z", got)
	}
	f := baidu.Facts(now)
	if !f.Exhausted || f.YearsLeft >= 0 {
		t.Errorf("baidu facts %+v: want exhausted", f)
	}
	tw := mustParse(t, "twitter").Facts(now)
	if tw.Exhausted || tw.RatePerNode != 4096000 || tw.Nodes != 1024 || tw.JSSafe {
		t.Errorf("twitter facts %+v", tw)
	}
	if y := tw.Lifetime.Year(); y != 2080 {
		t.Errorf("twitter lifetime %v, want 2080", tw.Lifetime)
	}
	js := mustParse(t, "jssafe").Facts(now)
	if !js.JSSafe || js.Lifetime.Sub(now) < 30*365*24*time.Hour {
		t.Errorf("jssafe facts %+v: want JS-safe for 30 years", js)
	}
	// Twitter IDs pass 2^53 once the time field passes 2^31 ms: 2010-11 + 24.9 days.
	if got, want := mustParse(t, "twitter").JSSafeUntil(), time.UnixMilli(1288834974657+1<<31).UTC(); !got.Equal(want) {
		t.Errorf("twitter JSSafeUntil %v, want %v", got, want)
	}
	m := mustParse(t, "mastodon").Facts(now)
	if m.Lifetime.Year() != 6429 || m.YearsLeft < 4000 {
		t.Errorf("mastodon lifetime %v, %v years left", m.Lifetime, m.YearsLeft)
	}
	if b, err := json.Marshal(tw); err != nil || !strings.Contains(string(b), `"ids_per_second_per_node":4096000`) {
		t.Errorf("facts JSON %s, %v", b, err)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		// A game-server proposal of 37-bit time + 20-bit server + 16-bit sequence: 73 bits.
		{"time:37:1ms:2013-01-01T00:00:00Z,server:20,seq:16", "fields take 73 bits (time 37 + server 20 + seq 16); at most 63 fit in a positive int64, so remove 10"},
		{"time:41:1ms:2010-11-04T01:42:54.657Z,worker:0,seq:12", `field "worker" has 0 bits`},
		{"time:41:1ms:2010-11-04T01:42:54.657Z,worker:5,worker:5,seq:12", `two fields are named "worker"`},
		{"worker:10,seq:12", "no time field"},
		{"time:41:1ms:2010-11-04T01:42:54.657Z,worker:10", "no sequence field"},
		{"seq:12,time:41:1ms:2010-11-04T01:42:54.657Z", "must come first"},
		{"time:41:1ms:2999-01-01T00:00:00Z,worker:10,seq:12", "is in the future"},
		{"time:41:1ms:1969-01-01T00:00:00Z,worker:10,seq:12", "before 1970"},
		{"time:41:1500us:2010-11-04T01:42:54.657Z,seq:12", "whole positive number of milliseconds"},
		{"time:41:fast:2010-11-04T01:42:54.657Z,seq:12", "is not a duration"},
		{"time:41:1ms:yesterday,seq:12", "neither RFC 3339"},
		{"time:41:1ms:2010-11-04T01:42:54.6571Z,seq:12", "sub-millisecond"},
		{"time:41:1ms,seq:12", "time:<bits>:<unit>:<epoch>"},
		{"time:41:1ms:0,Worker:5,seq:12", "use a lower-case ASCII letter"},
		{"time:41:1ms:0,tick:5,seq:12", "reserved"},
		{"time:41:1ms:0,w:x,seq:12", "is not a number"},
		{"time:41:1ms:0,w,seq:12", "write <name>:<bits>"},
		{"time:41:1ms:0,w:63,seq:12", "at most 62"},
		{"time:41:1ms:0,seq:12,seq:1", "two fields"},
		{"", "empty layout"},
		{"time:20:1ms:0,a:1,b:1,c:1,d:1,e:1,f:1,g:1,h:1,i:1,seq:1", "9 node fields"},
	} {
		_, err := Parse(tc.text)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want ErrInvalid containing %q", tc.text, err, tc.want)
		}
	}
	if _, err := Parse("snowflakes"); !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), "twitter") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := Parse("twiter"); !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), `"twiter"; did you mean twitter?`) {
		t.Errorf("a slip of a preset's name: %v", err)
	}
	if _, err := New(Spec{Fields: []Field{{Kind: Time, Bits: 41}, {Kind: Sequence, Bits: 12}}}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "epoch is not set") {
		t.Errorf("zero epoch: %v", err)
	}
}

// TestDateEpoch: a layout's epoch may be a plain date, its midnight in UTC, as
// flurry plan --epoch takes it.
func TestDateEpoch(t *testing.T) {
	l := mustParse(t, "time:41:1ms:2024-01-01,worker:10,seq:12")
	if !l.Epoch().Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) || !strings.Contains(l.String(), "2024-01-01T00:00:00Z") {
		t.Errorf("epoch %v, text %s", l.Epoch(), l)
	}
	if _, err := Parse("time:41:1ms:2024-13-01,seq:12"); err == nil || !strings.Contains(err.Error(), "a date (2010-11-04)") {
		t.Errorf("a bad date: %v", err)
	}
}

func TestTextRoundTrip(t *testing.T) {
	for _, s := range []string{
		"time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12",
		" time : 39 : 10ms : 1409529600000 , seq : 8 , machine : 16 ",
		"time:30:1m0s:2020-02-29T12:00:00+08:00,sequence:20",
		"time:62:1ms:0,seq:1",
	} {
		l := mustParse(t, s)
		back := mustParse(t, l.String())
		if !back.Equal(l) || back.String() != l.String() {
			t.Errorf("%q -> %q -> %q", s, l.String(), back.String())
		}
	}
	for _, p := range Presets() {
		if back := mustParse(t, p.String()); !back.Equal(p) {
			t.Errorf("preset %s does not round-trip through %s", p.Name(), p.String())
		}
	}
}

func TestNodeValues(t *testing.T) {
	l := mustParse(t, "twitter")
	nv, err := l.ParseNodeValues("worker=3, datacenter=1")
	if err != nil || nv != (NodeValues{1, 3}) {
		t.Fatalf("ParseNodeValues = %v, %v", nv, err)
	}
	if got := l.FormatNodeValues(nv); got != "datacenter=1,worker=3" {
		t.Errorf("FormatNodeValues = %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"worker=40", "worker 40 does not fit in 5 bits (0..31)"},
		{"worker=-1", "worker -1 does not fit in 5 bits (0..31)"},
		{"shard=1", `no node field "shard"; its node fields are datacenter, worker`},
		{"worker=1,worker=2", "given twice"},
		{"worker", "write name=value"},
		{"worker=x", "not a whole number"},
	} {
		if _, err := l.ParseNodeValues(tc.in); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseNodeValues(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	if err := l.CheckNodeValues(NodeValues{0, 0, 5}); !errors.Is(err, ErrInvalid) {
		t.Error("value past the node fields accepted")
	}
}

func TestComposeDecompose(t *testing.T) {
	l := mustParse(t, "sonyflake")
	maxTick := int64(1)<<39 - 1
	for _, p := range []Parts{
		{},
		{Tick: maxTick, Nodes: NodeValues{65535}, Sequence: 255},
		{Tick: 12345, Nodes: NodeValues{7}, Sequence: 3},
	} {
		id, err := l.Compose(p)
		if err != nil {
			t.Fatal(err)
		}
		if id < 0 {
			t.Fatalf("negative ID %d", id)
		}
		if back, err := l.Decompose(id); err != nil || back != p {
			t.Errorf("round trip %+v -> %d -> %+v, %v", p, id, back, err)
		}
	}
	for _, p := range []Parts{{Tick: -1}, {Tick: maxTick + 1}, {Sequence: 256}, {Nodes: NodeValues{65536}}} {
		if _, err := l.Compose(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("Compose(%+v) = %v, want ErrInvalid", p, err)
		}
	}
	if _, err := l.Decompose(-5); !errors.Is(err, ErrInvalid) {
		t.Error("negative ID decoded")
	}
	small := mustParse(t, "jssafe")
	if _, err := small.Decompose(1 << 53); !errors.Is(err, ErrInvalid) {
		t.Error("ID above a 53-bit layout decoded")
	}
}

func TestDecodeJSON(t *testing.T) {
	l := mustParse(t, "discord")
	d, err := l.Decode(175928847299117063)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	want := `{"id":"175928847299117063","time":"2016-04-30T11:18:25.796Z","worker":1,"process":0,"seq":7}`
	if string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
	var back Decoded
	if err := json.Unmarshal(b, &back); err != nil || back.ID != d.ID || !back.Time.Equal(d.Time) || back.Sequence != 7 || len(back.Nodes) != 2 {
		t.Errorf("unmarshal %+v, %v", back, err)
	}
}

func TestBounds(t *testing.T) {
	l := mustParse(t, "twitter")
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	lo, hi, err := l.Bounds(from, to)
	if err != nil {
		t.Fatal(err)
	}
	if !l.TimeOf(lo).Equal(from) || !l.TimeOf(hi).Equal(to) {
		t.Errorf("bounds times %v %v", l.TimeOf(lo), l.TimeOf(hi))
	}
	// Every ID of any node in the range lies within, and IDs just outside do not.
	in, _ := l.Compose(Parts{Tick: l.TickOf(from), Nodes: NodeValues{31, 31}, Sequence: 4095})
	first, _ := l.Compose(Parts{Tick: l.TickOf(from)})
	last, _ := l.Compose(Parts{Tick: l.TickOf(to), Nodes: NodeValues{31, 31}, Sequence: 4095})
	before, _ := l.Compose(Parts{Tick: l.TickOf(from) - 1, Nodes: NodeValues{31, 31}, Sequence: 4095})
	after, _ := l.Compose(Parts{Tick: l.TickOf(to) + 1})
	if first != lo || last != hi || in < lo || in > hi || before >= lo || after <= hi {
		t.Errorf("lo %d hi %d first %d last %d before %d after %d", lo, hi, first, last, before, after)
	}
	if _, _, err := l.Bounds(to, from); !errors.Is(err, ErrInvalid) {
		t.Errorf("reversed range: %v", err)
	}
	lo, hi, _ = l.Bounds(time.Unix(0, 0), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if lo != 0 || hi != 1<<63-1 {
		t.Errorf("clamped bounds %d %d", lo, hi)
	}
}

func TestTickOf(t *testing.T) {
	l := mustParse(t, "sonyflake")
	e := l.Epoch()
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {9_999_999, 0}, {10_000_000, 1}, {-1, -1}, {-10_000_000, -1}, {-10_000_001, -2}} {
		if got := l.TickOf(e.Add(tc.d)); got != tc.want {
			t.Errorf("TickOf(epoch%+v) = %d, want %d", tc.d, got, tc.want)
		}
		if tc.want >= 0 && tc.d%(10*time.Millisecond) == 0 && !l.TickTime(tc.want).Equal(e.Add(tc.d)) {
			t.Errorf("TickTime(%d) = %v, want %v", tc.want, l.TickTime(tc.want), e.Add(tc.d))
		}
	}
}

func TestFormatLeft(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{5607 * time.Hour, "233 days"},
		{48 * time.Hour, "2 days"},
		{47*time.Hour + 5*time.Minute + 30*time.Second, "47h05m"},
		{90 * time.Second, "1m30s"},
		{0, "none"},
		{-time.Hour, "none"},
	} {
		if got := FormatLeft(tc.d); got != tc.want {
			t.Errorf("FormatLeft(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
