package layout

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry"
)

// NodeValues holds one value per node field, in the layout's order (see
// [Layout.NodeFields]). Entries past the layout's node fields must be zero. It is a
// fixed-size array so that composing and decoding do not allocate.
type NodeValues [MaxNodeFields]int64

// Parts are the field values of one ID.
type Parts struct {
	// Tick is the time field: units since the epoch.
	Tick int64
	// Nodes holds the node fields in layout order.
	Nodes NodeValues
	// Sequence is the sequence field.
	Sequence int64
}

// CheckNodeValues reports whether nv holds node values of the layout: every value
// fits its field, and none is given past the last node field. The error wraps
// [ErrInvalid] and names the field and its range: "worker 40 does not fit in 5 bits
// (0..31)".
func (l *Layout) CheckNodeValues(nv NodeValues) error {
	_, err := l.c.NodeMask(nv)
	return err
}

// ParseNodeValues reads node values written as "name=value" pairs separated by commas,
// e.g. "datacenter=1,worker=3". Fields left out are zero. Unknown names, repeated
// names, malformed numbers and values out of range are errors wrapping [ErrInvalid].
func (l *Layout) ParseNodeValues(s string) (NodeValues, error) {
	var nv NodeValues
	s = strings.TrimSpace(s)
	if s == "" {
		return nv, nil
	}
	seen := map[string]bool{}
	for _, pair := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(pair, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok {
			return nv, fmt.Errorf("%w: node value %q: write name=value, e.g. worker=3", ErrInvalid, clip(strings.TrimSpace(pair)))
		}
		i := l.nodeIndex(name)
		if i < 0 {
			return nv, fmt.Errorf("%w: the layout has no node field %q; its node fields are %s", ErrInvalid, clip(name), l.nodeNames())
		}
		if seen[name] {
			return nv, fmt.Errorf("%w: node field %q is given twice", ErrInvalid, name)
		}
		seen[name] = true
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nv, fmt.Errorf("%w: %s=%q is not a whole number", ErrInvalid, name, clip(val))
		}
		nv[i] = v
	}
	if err := l.CheckNodeValues(nv); err != nil {
		return nv, err
	}
	return nv, nil
}

// FormatNodeValues writes nv as "name=value" pairs in layout order, the form
// ParseNodeValues reads.
func (l *Layout) FormatNodeValues(nv NodeValues) string {
	var b strings.Builder
	for i, n := range l.c.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", n.Name, nv[i])
	}
	return b.String()
}

func (l *Layout) nodeIndex(name string) int {
	for i, n := range l.c.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

func (l *Layout) nodeNames() string {
	if len(l.c.Nodes) == 0 {
		return "none"
	}
	var names []string
	for _, n := range l.c.Nodes {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// Compose builds an ID from its parts. Every part must fit its field; otherwise the
// error wraps [ErrInvalid] and names the field and its range.
func (l *Layout) Compose(p Parts) (flurry.ID, error) {
	c := l.c
	if p.Tick < 0 || p.Tick > c.MaxTick() {
		return 0, fmt.Errorf("%w: time %d does not fit in %d bits (0..%d)", ErrInvalid, p.Tick, c.TimeBits, c.MaxTick())
	}
	if p.Sequence < 0 || p.Sequence > c.MaxSequence() {
		return 0, fmt.Errorf("%w: seq %d does not fit in %d bits (0..%d)", ErrInvalid, p.Sequence, c.SeqBits, c.MaxSequence())
	}
	mask, err := c.NodeMask(p.Nodes)
	if err != nil {
		return 0, err
	}
	return flurry.ID(c.Compose(p.Tick, mask, p.Sequence)), nil
}

// Decompose splits an ID into its parts. A negative ID, or one with bits set above
// the layout's width, is not an ID of this layout: the error wraps [ErrInvalid].
func (l *Layout) Decompose(id flurry.ID) (Parts, error) {
	var p Parts
	if id < 0 || uint64(id)>>l.c.Bits != 0 {
		return p, fmt.Errorf("%w: %d is not an ID of this %d-bit layout (0..%d)", ErrInvalid, int64(id), l.c.Bits, int64(1)<<l.c.Bits-1)
	}
	p.Tick, p.Nodes, p.Sequence = l.c.Split(int64(id))
	return p, nil
}

// TickTime returns the instant at which the given tick starts. With [Layout.TickOf]
// it converts between instants and the Tick of [Parts].
func (l *Layout) TickTime(tick int64) time.Time {
	return time.UnixMilli(l.c.TickStartMs(tick)).UTC()
}

// TickOf returns the tick that contains instant t: the Tick an ID issued at t has.
// It is negative before the epoch and exceeds the time field's largest value after
// the lifetime, where [Layout.Compose] refuses it.
func (l *Layout) TickOf(t time.Time) int64 { return l.c.TickOfMs(t.UnixMilli()) }

// TimeOf returns the start of the tick an ID was issued in. It does not check the ID;
// use Decompose for that.
func (l *Layout) TimeOf(id flurry.ID) time.Time {
	tick, _, _ := l.c.Split(int64(id))
	return l.TickTime(tick)
}

// Bounds returns the smallest and the largest ID any node can issue in the ticks that
// contain from and to, for range queries on an ID column:
//
//	lo, hi, _ := l.Bounds(from, to)
//	db.Query("SELECT ... WHERE id BETWEEN $1 AND $2", lo, hi)
//
// Times before the epoch count as the first tick and times after the lifetime as the
// last. from after to is an error wrapping [ErrInvalid].
func (l *Layout) Bounds(from, to time.Time) (lo, hi flurry.ID, err error) {
	if from.After(to) {
		return 0, 0, fmt.Errorf("%w: range start %s is after its end %s", ErrInvalid, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
	}
	c := l.c
	clamp := func(t int64) int64 { return min(max(t, 0), c.MaxTick()) }
	a, b := clamp(l.TickOf(from)), clamp(l.TickOf(to))
	low := int64(1)<<c.TimeShift - 1 // every bit below the time field
	return flurry.ID(a << c.TimeShift), flurry.ID(b<<c.TimeShift | low), nil
}

// Decoded is an ID taken apart for people: its time and every named field. It
// marshals to JSON as one flat object in layout order:
//
//	{"id":"1541815603606036480","time":"2022-06-28T16:07:40.105Z","datacenter":1,"worker":3,"seq":0}
type Decoded struct {
	ID       flurry.ID
	Time     time.Time
	Tick     int64
	Nodes    []NamedValue
	Sequence int64
}

// NamedValue is a node field's name and value.
type NamedValue struct {
	Name  string
	Value int64
}

// Decode takes an ID apart with field names; see [Decoded].
func (l *Layout) Decode(id flurry.ID) (Decoded, error) {
	p, err := l.Decompose(id)
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{ID: id, Time: l.TickTime(p.Tick), Tick: p.Tick, Sequence: p.Sequence}
	for i, n := range l.c.Nodes {
		d.Nodes = append(d.Nodes, NamedValue{Name: n.Name, Value: p.Nodes[i]})
	}
	return d, nil
}

// MarshalJSON writes the flat object described at [Decoded]: the ID as a decimal
// string, the time in RFC 3339 with milliseconds, then the node fields and seq.
func (d Decoded) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, int64(d.ID), 10)
	b = append(b, `","time":"`...)
	b = d.Time.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, '"')
	for _, n := range d.Nodes {
		b = append(b, ',')
		b = strconv.AppendQuote(b, n.Name)
		b = append(b, ':')
		b = strconv.AppendInt(b, n.Value, 10)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, d.Sequence, 10)
	b = append(b, '}')
	return b, nil
}

// jsonInt reads an integer written as a JSON number or, as protojson writes int64,
// a string.
func jsonInt(raw json.RawMessage) (int64, error) {
	var v int64
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return strconv.ParseInt(s, 10, 64)
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// UnmarshalJSON reads the form MarshalJSON writes, and the form of flurry's decode
// route (GET /v1/{namespace}/decode/{id}: unix_ms, fields as a list of name and
// value, sequence, namespace, strategy), which `flurry decode` adds to its lines.
// Node fields come back sorted by name, since a JSON object does not keep order.
func (d *Decoded) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*d = Decoded{}
	var list []NamedValue
	for k, raw := range m {
		var err error
		switch k {
		case "id":
			err = d.ID.UnmarshalJSON(raw)
		case "time":
			err = json.Unmarshal(raw, &d.Time)
		case "seq":
			err = json.Unmarshal(raw, &d.Sequence)
		case "sequence": // the route's int64s are strings (protojson)
			d.Sequence, err = jsonInt(raw)
		case "fields":
			var fs []struct {
				Name  string          `json:"name"`
				Value json.RawMessage `json:"value"`
			}
			err = json.Unmarshal(raw, &fs)
			for _, f := range fs {
				v, ferr := jsonInt(f.Value)
				if ferr != nil {
					err = ferr
				}
				list = append(list, NamedValue{Name: f.Name, Value: v})
			}
		case "unix_ms", "namespace", "strategy": // the time is read from "time"
		default:
			var v int64
			err = json.Unmarshal(raw, &v)
			d.Nodes = append(d.Nodes, NamedValue{Name: k, Value: v})
		}
		if err != nil {
			return fmt.Errorf("layout: decoded ID field %q: %w", k, err)
		}
	}
	if len(d.Nodes) == 0 { // the route's form alone: the node fields are in the list
		d.Nodes = list
	}
	sort.Slice(d.Nodes, func(i, j int) bool { return d.Nodes[i].Name < d.Nodes[j].Name })
	return nil
}
