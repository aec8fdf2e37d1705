package uuidv7

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error wraps ErrInvalid, and
// that whatever it accepts formats to a canonical string that parses back to the
// same UUID.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		rfcVector,
		"017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
		"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
		"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
		"00000000-0000-0000-0000-000000000000",
		"9f5b2a8e-0c1d-4e8b-9c3a-1b2c3d4e5f60",
		"017f22e279b07cc398c4dc0c0c07398f",
		"",
		"{}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if !u.IsV7() {
			t.Fatalf("Parse(%q) accepted %v, not a version 7 UUID", s, u)
		}
		c := u.String()
		if len(c) != 36 {
			t.Fatalf("String() = %q", c)
		}
		for i := 0; i < len(c); i++ {
			if ch := c[i]; !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch == '-') {
				t.Fatalf("String() = %q is not canonical lower-case hex", c)
			}
		}
		v, err := Parse(c)
		if err != nil || v != u {
			t.Fatalf("Parse(%q) = %v, %v; want %v (from %q)", c, v, err, u, s)
		}
		var w UUID
		if err := w.UnmarshalText([]byte(s)); err != nil || w != u {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", s, w, err, u)
		}
	})
}
