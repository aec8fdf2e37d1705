package layout

import (
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/bitcodec"
)

// Kind tells what a field holds.
type Kind uint8

const (
	// Time is the count of time units since the epoch. A layout has exactly one, first.
	Time Kind = iota + 1
	// Node identifies who issued the ID: a machine, datacenter, shard, platform ...
	Node
	// Sequence tells IDs of one node and one time unit apart. A layout has exactly one.
	Sequence
)

// String returns "time", "node" or "sequence".
func (k Kind) String() string {
	switch k {
	case Time:
		return "time"
	case Node:
		return "node"
	case Sequence:
		return "sequence"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MaxBits is the number of bits an ID may use: an int64 without its sign bit.
const MaxBits = 63

// MaxNodeFields is the largest number of node fields a layout may have. It keeps
// [Parts] and [NodeValues] fixed-size, so decoding does not allocate.
const MaxNodeFields = 8

// Field is one bit field of a layout.
type Field struct {
	// Name is the field's name. The time and sequence fields are always named "time"
	// and "seq"; Spec accepts an empty name for them.
	Name string
	Kind Kind
	Bits int
}

// Spec describes a layout to build with [New].
type Spec struct {
	// Name is an optional label, such as a preset name. It does not take part in
	// [Layout.Equal] or the text form.
	Name string
	// Fields lists the fields, most significant first. The time field must be first.
	Fields []Field
	// Unit is the length of one tick of the time field: a whole number of
	// milliseconds. Zero means one millisecond.
	Unit time.Duration
	// Epoch is the instant where the time field is zero. It must have at most
	// millisecond precision, must not be before 1970 and must not be in the future.
	// The zero Epoch is refused: an epoch has to be chosen on purpose.
	Epoch time.Time
}

// Layout is a validated, immutable bit layout. It is safe for concurrent use.
type Layout struct {
	name   string
	fields []Field
	unit   time.Duration
	epoch  time.Time
	c      *bitcodec.Codec // the fields' positions; shared with snowflake and redisgen
}

var reserved = map[string]bool{"time": true, "seq": true, "sequence": true, "id": true, "tick": true}

// New validates spec and returns the layout. Errors wrap [ErrInvalid] and say which
// number is wrong:
//   - more than 63 bits in all, naming each field's share;
//   - a field of 0 bits, a field wider than 62 bits, a duplicate or malformed name;
//   - no time field, no sequence field, or more than one of either;
//   - a time field that is not the most significant field;
//   - more than MaxNodeFields node fields;
//   - a unit that is not a whole positive number of milliseconds;
//   - a zero epoch, an epoch before 1970, with sub-millisecond precision, or in the future.
func New(spec Spec) (*Layout, error) {
	return build(spec, time.Now())
}

func build(spec Spec, now time.Time) (*Layout, error) {
	if len(spec.Fields) == 0 {
		return nil, fmt.Errorf("%w: no fields; a layout needs a time field, a sequence field and optional node fields", ErrInvalid)
	}
	l := &Layout{name: spec.Name, unit: spec.Unit}
	var total int
	seen := map[string]bool{}
	var times, seqs int
	var parts []string
	for i, f := range spec.Fields {
		name := f.Name
		switch f.Kind {
		case Time:
			if name == "" {
				name = "time"
			}
			if name != "time" {
				return nil, fmt.Errorf("%w: the time field must be named \"time\", not %q", ErrInvalid, f.Name)
			}
			times++
			if i != 0 {
				return nil, fmt.Errorf("%w: the time field is field %d; it must come first (most significant) so that IDs sort by time", ErrInvalid, i+1)
			}
		case Sequence:
			if name == "" || name == "sequence" {
				name = "seq"
			}
			if name != "seq" {
				return nil, fmt.Errorf("%w: the sequence field must be named \"seq\", not %q", ErrInvalid, f.Name)
			}
			seqs++
		case Node:
			if err := checkName(name); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: field %d (%q) has no kind; use layout.Time, layout.Node or layout.Sequence", ErrInvalid, i+1, f.Name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: two fields are named %q", ErrInvalid, name)
		}
		seen[name] = true
		if f.Bits <= 0 {
			return nil, fmt.Errorf("%w: field %q has %d bits; every field needs at least 1", ErrInvalid, name, f.Bits)
		}
		if f.Bits > 62 {
			return nil, fmt.Errorf("%w: field %q has %d bits; at most 62 leave room for the other fields", ErrInvalid, name, f.Bits)
		}
		l.fields = append(l.fields, Field{Name: name, Kind: f.Kind, Bits: f.Bits})
		total += f.Bits
		parts = append(parts, fmt.Sprintf("%s %d", name, f.Bits))
	}
	if times == 0 {
		return nil, fmt.Errorf("%w: no time field; add one first, e.g. time:41:1ms:<epoch>", ErrInvalid)
	}
	if times > 1 {
		return nil, fmt.Errorf("%w: %d time fields; a layout has exactly one", ErrInvalid, times)
	}
	if seqs == 0 {
		return nil, fmt.Errorf("%w: no sequence field; add one, e.g. seq:12", ErrInvalid)
	}
	if seqs > 1 {
		return nil, fmt.Errorf("%w: %d sequence fields; a layout has exactly one", ErrInvalid, seqs)
	}
	if l.unit == 0 {
		l.unit = time.Millisecond
	}
	if l.unit < time.Millisecond || l.unit%time.Millisecond != 0 {
		return nil, fmt.Errorf("%w: unit %v is not a whole positive number of milliseconds", ErrInvalid, spec.Unit)
	}
	if spec.Epoch.IsZero() {
		return nil, fmt.Errorf("%w: the epoch is not set; choose the instant the time field counts from, shortly before the first ID", ErrInvalid)
	}
	epoch := spec.Epoch.UTC()
	if epoch.Before(time.Unix(0, 0)) {
		return nil, fmt.Errorf("%w: epoch %s is before 1970-01-01", ErrInvalid, formatEpoch(epoch))
	}
	if epoch.Nanosecond()%int(time.Millisecond) != 0 {
		return nil, fmt.Errorf("%w: epoch %s has sub-millisecond precision; round it to a millisecond", ErrInvalid, epoch.Format(time.RFC3339Nano))
	}
	if epoch.After(now) {
		return nil, fmt.Errorf("%w: epoch %s is in the future (now is %s); IDs before it cannot be made", ErrInvalid, formatEpoch(epoch), now.UTC().Format(time.RFC3339))
	}
	l.epoch = epoch

	if total > MaxBits {
		return nil, fmt.Errorf("%w: fields take %d bits (%s); at most %d fit in a positive int64, so remove %d",
			ErrInvalid, total, strings.Join(parts, " + "), MaxBits, total-MaxBits)
	}
	if n := len(l.fields) - 2; n > MaxNodeFields {
		return nil, fmt.Errorf("%w: %d node fields; at most %d are supported", ErrInvalid, n, MaxNodeFields)
	}
	l.c = bitcodec.New(l.fields, l.unit, l.epoch, ErrInvalid)
	return l, nil
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: a node field has no name", ErrInvalid)
	}
	if reserved[name] {
		return fmt.Errorf("%w: %q is reserved and cannot name a node field", ErrInvalid, name)
	}
	if len(name) > 32 {
		return fmt.Errorf("%w: node field name %q is longer than 32 characters", ErrInvalid, clip(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')
		if !ok {
			return fmt.Errorf("%w: node field name %q: use a lower-case ASCII letter, then lower-case ASCII letters, digits or _", ErrInvalid, clip(name))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Name returns the preset or spec name, or "" for an unnamed layout.
func (l *Layout) Name() string { return l.name }

// Fields returns a copy of the fields, most significant first.
func (l *Layout) Fields() []Field { return append([]Field(nil), l.fields...) }

// NodeFields returns the node fields, most significant first, in the order that
// [NodeValues] and [Parts.Nodes] use.
func (l *Layout) NodeFields() []Field {
	out := make([]Field, len(l.c.Nodes))
	for i, n := range l.c.Nodes {
		out[i] = Field{Name: n.Name, Kind: Node, Bits: int(n.Bits)}
	}
	return out
}

// Unit returns the length of one tick.
func (l *Layout) Unit() time.Duration { return l.unit }

// Epoch returns the instant where the time field is zero, in UTC.
func (l *Layout) Epoch() time.Time { return l.epoch }

// Bits returns the number of bits the fields take (at most 63).
func (l *Layout) Bits() int { return int(l.c.Bits) }

// MaxSequence returns the largest value of the sequence field: one node issues up
// to MaxSequence+1 IDs per tick.
func (l *Layout) MaxSequence() int64 { return l.c.MaxSequence() }

// Equal reports whether two layouts have the same fields, unit and epoch. Names of
// presets do not count: Equal(twitter, Parse(twitter.String())) is true.
func (l *Layout) Equal(o *Layout) bool {
	if l == nil || o == nil {
		return l == o
	}
	if l.unit != o.unit || !l.epoch.Equal(o.epoch) || len(l.fields) != len(o.fields) {
		return false
	}
	for i := range l.fields {
		if l.fields[i] != o.fields[i] {
			return false
		}
	}
	return true
}
