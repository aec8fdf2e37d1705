package layout

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse returns the preset with the given name ("twitter", "sonyflake", ...;
// [PresetNames]), or parses a layout's text form: comma-separated fields, most
// significant first, "time:BITS:UNIT:EPOCH", "NAME:BITS" and "seq:BITS" (or
// "sequence:BITS"), such as
//
//	time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12
//
// BITS is 1..62; UNIT is a Go duration of whole milliseconds ("1ms", "10ms", "1s");
// EPOCH is RFC 3339 with at most millisecond precision or a count of Unix
// milliseconds; NAME is a lower-case letter followed by lower-case letters, digits
// or underscores, at most 32 characters, and not time, seq, sequence, id or tick.
// Spaces around tokens are ignored. [Layout.String] gives the canonical text form,
// so Parse(l.String()) equals l. Errors wrap [ErrInvalid] or [ErrUnknownPreset].
func Parse(text string) (*Layout, error) {
	return parse(text, time.Now())
}

func parse(text string, now time.Time) (*Layout, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return nil, fmt.Errorf("%w: empty layout; give a preset name (%s) or fields such as time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12", ErrInvalid, strings.Join(PresetNames(), ", "))
	}
	if !strings.ContainsAny(s, ":,") {
		return Lookup(s)
	}
	var spec Spec
	for i, raw := range strings.Split(s, ",") {
		parts := strings.Split(raw, ":")
		for j := range parts {
			parts[j] = strings.TrimSpace(parts[j])
		}
		name := parts[0]
		switch name {
		case "time":
			// The epoch may itself contain colons (RFC 3339), so rejoin them.
			if len(parts) < 4 {
				return nil, fmt.Errorf("%w: field %d %q: the time field is time:<bits>:<unit>:<epoch>, e.g. time:41:1ms:2010-11-04T01:42:54.657Z", ErrInvalid, i+1, clip(strings.TrimSpace(raw)))
			}
			bits, err := parseBits(i, name, parts[1])
			if err != nil {
				return nil, err
			}
			unit, err := time.ParseDuration(parts[2])
			if err != nil || unit <= 0 {
				return nil, fmt.Errorf("%w: time unit %q is not a duration such as 1ms, 10ms or 1s", ErrInvalid, clip(parts[2]))
			}
			epoch, err := parseEpoch(strings.Join(parts[3:], ":"))
			if err != nil {
				return nil, err
			}
			spec.Unit, spec.Epoch = unit, epoch
			spec.Fields = append(spec.Fields, Field{Name: "time", Kind: Time, Bits: bits})
		default:
			if len(parts) != 2 {
				return nil, fmt.Errorf("%w: field %d %q: write <name>:<bits>, e.g. worker:10 or seq:12", ErrInvalid, i+1, clip(strings.TrimSpace(raw)))
			}
			bits, err := parseBits(i, name, parts[1])
			if err != nil {
				return nil, err
			}
			kind := Node
			if name == "seq" || name == "sequence" {
				kind, name = Sequence, "seq"
			}
			spec.Fields = append(spec.Fields, Field{Name: name, Kind: kind, Bits: bits})
		}
	}
	return build(spec, now)
}

func parseBits(i int, name, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 64 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%w: field %d %q: bits %q is not a number from 1 to 62", ErrInvalid, i+1, clip(name), clip(s))
	}
	return n, nil
}

// parseEpoch reads RFC 3339 (at most millisecond precision), a date (its
// midnight, UTC; as flurry plan --epoch takes it) or Unix milliseconds.
func parseEpoch(s string) (time.Time, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms > 253402300799999 {
			return time.Time{}, fmt.Errorf("%w: epoch %q is beyond year 9999 in Unix milliseconds", ErrInvalid, clip(s))
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: epoch %q is neither RFC 3339 (2010-11-04T01:42:54.657Z), a date (2010-11-04) nor Unix milliseconds", ErrInvalid, clip(s))
	}
	return t.UTC(), nil
}

func formatEpoch(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func formatUnit(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

// String returns the canonical text form, e.g.
// "time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12".
func (l *Layout) String() string {
	var b strings.Builder
	for i, f := range l.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Bits))
		if f.Kind == Time {
			b.WriteByte(':')
			b.WriteString(formatUnit(l.unit))
			b.WriteByte(':')
			b.WriteString(formatEpoch(l.epoch))
		}
	}
	return b.String()
}

// MarshalText implements encoding.TextMarshaler with the canonical text form.
func (l *Layout) MarshalText() ([]byte, error) { return []byte(l.String()), nil }
