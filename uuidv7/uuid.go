package uuidv7

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// UUID is a UUID in its 16-byte binary form, most significant byte first. It is
// comparable and can be a map key; bytes.Compare order is time order for version 7.
// The zero UUID is the RFC 9562 Nil UUID, which is not a version 7 UUID.
type UUID [16]byte

// Variant is the variant field of a UUID (RFC 9562 §4.1).
type Variant uint8

const (
	// VariantNCS is variant 0xx, reserved for backward compatibility with NCS UUIDs.
	VariantNCS Variant = iota
	// VariantRFC9562 is variant 10x, the one RFC 9562 (formerly RFC 4122) defines and
	// the only one this package issues and parses.
	VariantRFC9562
	// VariantMicrosoft is variant 110, reserved for old Microsoft GUIDs.
	VariantMicrosoft
	// VariantFuture is variant 111, reserved for future definition.
	VariantFuture
)

// String returns "ncs", "rfc9562", "microsoft" or "future".
func (v Variant) String() string {
	switch v {
	case VariantNCS:
		return "ncs"
	case VariantRFC9562:
		return "rfc9562"
	case VariantMicrosoft:
		return "microsoft"
	}
	return "future"
}

// Version returns the version field, the high 4 bits of byte 6: 7 for the UUIDs of
// this package.
func (u UUID) Version() int { return int(u[6] >> 4) }

// Variant returns the variant field, the high bits of byte 8.
func (u UUID) Variant() Variant {
	switch b := u[8]; {
	case b&0x80 == 0:
		return VariantNCS
	case b&0xc0 == 0x80:
		return VariantRFC9562
	case b&0xe0 == 0xc0:
		return VariantMicrosoft
	}
	return VariantFuture
}

// IsV7 reports whether u is a version 7 UUID of the RFC 9562 variant, the only kind
// [Parse] accepts.
func (u UUID) IsV7() bool { return u.Version() == 7 && u.Variant() == VariantRFC9562 }

// UnixMilli returns the 48-bit unix_ts_ms field: milliseconds since the Unix epoch.
func (u UUID) UnixMilli() int64 {
	return int64(binary.BigEndian.Uint64(u[0:8]) >> 16)
}

// Time returns the time in the unix_ts_ms field, in UTC, to the millisecond. The
// 12-bit sub-millisecond fraction this package puts in rand_a is not added, because
// other generators fill rand_a with a counter or random bits.
func (u UUID) Time() time.Time { return time.UnixMilli(u.UnixMilli()).UTC() }

// Compare returns -1, 0 or +1 as u sorts before, equal to or after v (byte order,
// which is time order for version 7 UUIDs).
func (u UUID) Compare(v UUID) int { return bytes.Compare(u[:], v[:]) }

// IsZero reports whether u is the Nil UUID (all zero).
func (u UUID) IsZero() bool { return u == UUID{} }

const hexDigits = "0123456789abcdef"

// String returns the canonical form: 36 characters, lower-case hex in groups of
// 8-4-4-4-12, such as 017f22e2-79b0-7cc3-98c4-dc0c0c07398f.
func (u UUID) String() string {
	var b [36]byte
	u.encode(&b)
	return string(b[:])
}

// AppendText appends the canonical form to b. It does not allocate when b has room
// for 36 more bytes.
func (u UUID) AppendText(b []byte) ([]byte, error) {
	var t [36]byte
	u.encode(&t)
	return append(b, t[:]...), nil
}

// MarshalText implements encoding.TextMarshaler with the canonical form; JSON
// encodes a UUID as that string.
func (u UUID) MarshalText() ([]byte, error) { return u.AppendText(make([]byte, 0, 36)) }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts what [Parse] accepts.
func (u *UUID) UnmarshalText(text []byte) error {
	v, err := parse(text)
	if err != nil {
		return err
	}
	*u = v
	return nil
}

func (u UUID) encode(b *[36]byte) {
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j] = hexDigits[c>>4]
		b[j+1] = hexDigits[c&0x0f]
		j += 2
	}
}

// Parse parses a version 7 UUID. It accepts the canonical 8-4-4-4-12 hex form in
// either case, optionally in braces ({...}) or after a "urn:uuid:" prefix (in any
// case). Anything else, and any UUID that is not version 7 of the RFC 9562 variant
// (the Nil and Max UUIDs included), is refused with an error wrapping [ErrInvalid]
// that says why.
func Parse(s string) (UUID, error) { return parse(s) }

// parse is generic so that neither Parse nor UnmarshalText copies its input.
func parse[T string | []byte](s T) (UUID, error) {
	in := s
	switch {
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		s = s[1:37]
	case len(s) == 45 && hasURNPrefix(s):
		s = s[9:]
	}
	if len(s) != 36 {
		return UUID{}, fmt.Errorf("%w: %q: want 36 characters in the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got %d", ErrInvalid, clip(in), len(in))
	}
	var u UUID
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return UUID{}, fmt.Errorf("%w: %q: want '-' at position %d", ErrInvalid, clip(in), i+1)
			}
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return UUID{}, fmt.Errorf("%w: %q: not a hex digit near position %d", ErrInvalid, clip(in), i+1)
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	if !u.IsV7() {
		return UUID{}, u.notV7(clip(in))
	}
	return u, nil
}

// hasURNPrefix reports whether s starts with "urn:uuid:" in any case.
func hasURNPrefix[T string | []byte](s T) bool {
	const p = "urn:uuid:"
	for i := 0; i < len(p); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return false
		}
	}
	return true
}

// notV7 says why u, read from in, is not a version 7 UUID.
func (u UUID) notV7(in string) error {
	if v := u.Version(); v != 7 {
		return fmt.Errorf("%w: %q is a version %d UUID, want version 7", ErrInvalid, in, v)
	}
	return fmt.Errorf("%w: %q has the %s variant, want rfc9562 (binary 10)", ErrInvalid, in, u.Variant())
}

// FromBytes returns the UUID whose 16-byte binary form is b, as stored in a
// BINARY(16) column or PostgreSQL's uuid type. It refuses a length other than 16 and
// a UUID that is not version 7 of the RFC 9562 variant.
func FromBytes(b []byte) (UUID, error) {
	if len(b) != 16 {
		return UUID{}, fmt.Errorf("%w: %d bytes, want 16", ErrInvalid, len(b))
	}
	u := UUID(b)
	if !u.IsV7() {
		return UUID{}, u.notV7(u.String())
	}
	return u, nil
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
