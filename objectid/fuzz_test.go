package objectid

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error wraps ErrInvalid, and
// that whatever it accepts formats to 24 lower-case hex digits that parse back to
// the same ID (the input itself, lower-cased).
func FuzzParse(f *testing.F) {
	for _, s := range []string{known, strings.ToUpper(known), "", "000000000000000000000000", "ffffffffffffffffffffffff", known + "0", `ObjectId("` + known + `")`, "zz7f1f77bcf86cd799439011"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		c := id.String()
		if c != strings.ToLower(s) {
			t.Fatalf("Parse(%q).String() = %q", s, c)
		}
		v, err := Parse(c)
		if err != nil || v != id {
			t.Fatalf("Parse(%q) = %v, %v; want %v", c, v, err, id)
		}
		var w ID
		if err := w.UnmarshalText([]byte(s)); err != nil || w != id {
			t.Fatalf("UnmarshalText(%q) = %v, %v", s, w, err)
		}
	})
}
