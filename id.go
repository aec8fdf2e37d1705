// Package flurry holds the ID type shared by every flurry generator, and Source,
// the interface the generators of integer IDs implement.
//
// The generators live in sub-packages: [github.com/flurryid/flurry/snowflake] for
// time-ordered IDs made in process, with bit layouts from
// [github.com/flurryid/flurry/layout]; [github.com/flurryid/flurry/segment] for
// ranges of plain integers from a database; [github.com/flurryid/flurry/redisgen]
// for IDs made inside Redis.
package flurry

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ID is a flurry ID: a non-negative 63-bit integer. Its text form is decimal, and it
// marshals to JSON as a decimal string because JavaScript numbers lose precision above
// 2^53 (Discord and bwmarrin/snowflake do the same); UnmarshalJSON accepts a string or
// a number.
type ID int64

// ErrInvalidID is returned when text or a database value is not a valid ID.
var ErrInvalidID = errors.New("flurry: invalid ID")

// String returns the ID in decimal.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// AppendText appends the decimal form of the ID to b. It does not allocate when b has room.
func (id ID) AppendText(b []byte) ([]byte, error) { return strconv.AppendInt(b, int64(id), 10), nil }

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(make([]byte, 0, 20)) }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts the decimal form of a
// non-negative int64.
func (id *ID) UnmarshalText(text []byte) error {
	v, err := ParseID(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// UnmarshalJSON accepts a JSON string or number holding a non-negative int64.
func (id *ID) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return id.UnmarshalText(b)
}

// ParseID parses the decimal form of an ID. It refuses signs, spaces, negative values
// and values above the int64 range, wrapping ErrInvalidID with the reason.
func ParseID(s string) (ID, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrInvalidID)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			if s[0] == '-' && len(s) > 1 && strings.Trim(s[1:], "0123456789") == "" {
				return 0, fmt.Errorf("%w: %q: IDs are never negative", ErrInvalidID, clip(s))
			}
			return 0, fmt.Errorf("%w: %q is not a decimal number", ErrInvalidID, clip(s))
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is above the int64 range", ErrInvalidID, clip(s))
	}
	return ID(v), nil
}

// Value implements driver.Valuer: IDs are stored as BIGINT.
func (id ID) Value() (driver.Value, error) { return int64(id), nil }

// Scan implements sql.Scanner for BIGINT, numeric text and []byte columns.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		if v < 0 {
			return fmt.Errorf("%w: %d is negative", ErrInvalidID, v)
		}
		*id = ID(v)
		return nil
	case []byte:
		return id.UnmarshalText(v)
	case string:
		return id.UnmarshalText([]byte(v))
	default:
		return fmt.Errorf("flurry: cannot scan %T into an ID", src)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
