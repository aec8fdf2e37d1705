package objectid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// ID is an ObjectId in its 12-byte binary form. It is comparable and can be a map
// key. The zero ID is all zero (time 1970-01-01T00:00:00Z).
type ID [12]byte

// Unix returns the time field: seconds since the Unix epoch, read as unsigned.
func (id ID) Unix() int64 { return int64(binary.BigEndian.Uint32(id[0:4])) }

// Time returns the time field as a time.Time in UTC, to the second.
func (id ID) Time() time.Time { return time.Unix(id.Unix(), 0).UTC() }

// Random returns the 5-byte random value of the generator (MongoDB: of the process)
// that made the ID.
func (id ID) Random() [5]byte { return [5]byte(id[4:9]) }

// Counter returns the 24-bit counter.
func (id ID) Counter() uint32 { return uint32(id[9])<<16 | uint32(id[10])<<8 | uint32(id[11]) }

// Compare returns -1, 0 or +1 as id sorts before, equal to or after other, in byte
// order (MongoDB's order for ObjectIds).
func (id ID) Compare(other ID) int { return bytes.Compare(id[:], other[:]) }

// IsZero reports whether id is all zero.
func (id ID) IsZero() bool { return id == ID{} }

const hexDigits = "0123456789abcdef"

// String returns the 24 lower-case hex digits of the ID, as MongoDB shows it inside
// ObjectId("...").
func (id ID) String() string {
	var b [24]byte
	id.encode(&b)
	return string(b[:])
}

// AppendText appends the 24 hex digits to b. It does not allocate when b has room.
func (id ID) AppendText(b []byte) ([]byte, error) {
	var t [24]byte
	id.encode(&t)
	return append(b, t[:]...), nil
}

// MarshalText implements encoding.TextMarshaler; JSON encodes an ID as that string
// (not MongoDB Extended JSON's {"$oid": ...}).
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(make([]byte, 0, 24)) }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts what [Parse] accepts.
func (id *ID) UnmarshalText(text []byte) error {
	v, err := parse(text)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

func (id ID) encode(b *[24]byte) {
	for i, c := range id {
		b[2*i] = hexDigits[c>>4]
		b[2*i+1] = hexDigits[c&0x0f]
	}
}

// Parse parses the 24 hex digits of an ObjectId, in either case. Anything else
// (other lengths, spaces, an ObjectId("...") wrapper) is refused with an error
// wrapping [ErrInvalid].
func Parse(s string) (ID, error) { return parse(s) }

func parse[T string | []byte](s T) (ID, error) {
	if len(s) != 24 {
		return ID{}, fmt.Errorf("%w: %q: want 24 hex digits, got %d characters", ErrInvalid, clip(s), len(s))
	}
	var id ID
	for i := range id {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return ID{}, fmt.Errorf("%w: %q: not a hex digit near position %d", ErrInvalid, clip(s), 2*i+1)
		}
		id[i] = hi<<4 | lo
	}
	return id, nil
}

// FromBytes returns the ID whose 12-byte binary form is b.
func FromBytes(b []byte) (ID, error) {
	if len(b) != 12 {
		return ID{}, fmt.Errorf("%w: %d bytes, want 12", ErrInvalid, len(b))
	}
	return ID(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func clip[T string | []byte](s T) string {
	if len(s) > 48 {
		return string(s[:48]) + "…"
	}
	return string(s)
}
