package layout

import (
	"fmt"
	"github.com/flurryid/flurry/internal/suggest"
	"sort"
	"strings"
	"time"
)

// preset describes a well-known layout. Each is built afresh by Lookup, so callers
// can never change another caller's preset.
type preset struct {
	about string
	spec  Spec
}

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

func presetTable() map[string]preset {
	f := func(name string, bits int) Field {
		switch name {
		case "time":
			return Field{Name: name, Kind: Time, Bits: bits}
		case "seq":
			return Field{Name: name, Kind: Sequence, Bits: bits}
		}
		return Field{Name: name, Kind: Node, Bits: bits}
	}
	twitter := ms(1288834974657) // 2010-11-04T01:42:54.657Z
	return map[string]preset{
		"twitter": {"Twitter Snowflake (2010): 41-bit ms time, 5-bit datacenter, 5-bit worker, 12-bit sequence",
			Spec{Unit: time.Millisecond, Epoch: twitter, Fields: []Field{f("time", 41), f("datacenter", 5), f("worker", 5), f("seq", 12)}}},
		"leaf": {"Meituan Leaf-snowflake: Twitter's epoch and widths, with one 10-bit worker ID from ZooKeeper",
			Spec{Unit: time.Millisecond, Epoch: twitter, Fields: []Field{f("time", 41), f("worker", 10), f("seq", 12)}}},
		"sonyflake": {"Sony sonyflake: 39-bit time in 10 ms, 8-bit sequence above a 16-bit machine ID",
			Spec{Unit: 10 * time.Millisecond, Epoch: time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC), Fields: []Field{f("time", 39), f("seq", 8), f("machine", 16)}}},
		"baidu": {"Baidu uid-generator defaults: 28-bit seconds from 2016-05-20 (UTC+8), 22-bit worker, 13-bit sequence; its time ran out on 2024-11-20",
			Spec{Unit: time.Second, Epoch: time.Date(2016, 5, 20, 0, 0, 0, 0, time.FixedZone("UTC+8", 8*3600)), Fields: []Field{f("time", 28), f("worker", 22), f("seq", 13)}}},
		"instagram": {"Instagram (2012): ms time, 13-bit logical shard, 10-bit sequence; Instagram's 41-bit time makes 64 bits and sets the sign bit from 2046-06, so flurry keeps the same bit positions in 40 bits",
			Spec{Unit: time.Millisecond, Epoch: ms(1314220021721), Fields: []Field{f("time", 40), f("shard", 13), f("seq", 10)}}},
		"discord": {"Discord: ms since 2015-01-01, 5-bit worker, 5-bit process, 12-bit increment (Discord's 42-bit time field has its top bit 0 until 2084, so 41 bits give the same IDs)",
			Spec{Unit: time.Millisecond, Epoch: ms(1420070400000), Fields: []Field{f("time", 41), f("worker", 5), f("process", 5), f("seq", 12)}}},
		"mastodon": {"Mastodon-like: ms since the Unix epoch above a 16-bit sequence, no node field (one generator per database)",
			Spec{Unit: time.Millisecond, Epoch: ms(0), Fields: []Field{f("time", 47), f("seq", 16)}}},
		"gameserver": {"Game server (a platform, area and app per server process): ms from 2018-11-01 (UTC+8), 3-bit platform, 11-bit area, 5-bit app, 6-bit sequence; the original's 39-bit time makes 64 bits and sets the sign bit from 2027-07-18, so flurry keeps the same bit positions in 38 bits and stops there",
			Spec{Unit: time.Millisecond, Epoch: ms(1541001600000), Fields: []Field{f("time", 38), f("platform", 3), f("area", 11), f("app", 5), f("seq", 6)}}},
		"jssafe": {"JavaScript-safe: 53 bits in all (below 2^53 until 2079): 34-bit time in 100 ms, 6-bit worker, 13-bit sequence",
			Spec{Unit: 100 * time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Fields: []Field{f("time", 34), f("worker", 6), f("seq", 13)}}},
	}
}

// PresetNames returns the names of the presets, sorted.
func PresetNames() []string {
	t := presetTable()
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the preset with the given name (case-insensitive). An unknown name
// is an error wrapping [ErrUnknownPreset] that lists the known ones.
func Lookup(name string) (*Layout, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	p, ok := presetTable()[key]
	if !ok {
		if near, ok := suggest.Closest(key, PresetNames()); ok {
			return nil, fmt.Errorf("%w %q; did you mean %s? (known presets: %s)", ErrUnknownPreset, clip(name), near, strings.Join(PresetNames(), ", "))
		}
		return nil, fmt.Errorf("%w %q; known presets: %s (or give fields, e.g. time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12)",
			ErrUnknownPreset, clip(name), strings.Join(PresetNames(), ", "))
	}
	p.spec.Name = key
	l, err := New(p.spec)
	if err != nil {
		panic("layout: preset " + key + " is invalid: " + err.Error()) // a bug in this file
	}
	return l, nil
}

// Presets returns every preset, sorted by name.
func Presets() []*Layout {
	var out []*Layout
	for _, n := range PresetNames() {
		l, _ := Lookup(n)
		out = append(out, l)
	}
	return out
}

// About returns a one-line description of a preset, or "" for other layouts.
func (l *Layout) About() string {
	if p, ok := presetTable()[l.name]; ok && l.Equal(mustBuild(p.spec)) {
		return p.about
	}
	return ""
}

func mustBuild(s Spec) *Layout {
	l, err := New(s)
	if err != nil {
		panic(err)
	}
	return l
}
