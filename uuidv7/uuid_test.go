package uuidv7

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// rfcVector is the UUIDv7 example of RFC 9562 Appendix A.6.
const (
	rfcVector   = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"
	rfcVectorMs = 0x017F22E279B0 // Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00
)

var rfcBytes = UUID{0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3, 0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f}

func TestRFCVectorDecodes(t *testing.T) {
	u, err := Parse(rfcVector)
	if err != nil {
		t.Fatal(err)
	}
	if u != rfcBytes {
		t.Fatalf("Parse = %x, want %x", u[:], rfcBytes[:])
	}
	if got, want := u.String(), strings.ToLower(rfcVector); got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	if u.UnixMilli() != rfcVectorMs {
		t.Errorf("UnixMilli = %#x, want %#x", u.UnixMilli(), rfcVectorMs)
	}
	if want := time.Date(2022, 2, 22, 19, 22, 22, 0, time.UTC); !u.Time().Equal(want) {
		t.Errorf("Time = %v, want %v", u.Time(), want)
	}
	if u.Version() != 7 || u.Variant() != VariantRFC9562 || !u.IsV7() {
		t.Errorf("Version %d Variant %v", u.Version(), u.Variant())
	}
}

func TestParse(t *testing.T) {
	lower := strings.ToLower(rfcVector)
	for _, tc := range []struct {
		name, in string
		ok       bool
		why      string // a piece of the error message
	}{
		{"canonical", lower, true, ""},
		{"upper", rfcVector, true, ""},
		{"braces", "{" + lower + "}", true, ""},
		{"urn", "urn:uuid:" + lower, true, ""},
		{"URN", "URN:UUID:" + rfcVector, true, ""},
		{"empty", "", false, "36 characters"},
		{"no dashes", strings.ReplaceAll(lower, "-", ""), false, "36 characters"},
		{"short", lower[:35], false, "36 characters"},
		{"long", lower + "0", false, "36 characters"},
		{"spaces", " " + lower[1:], false, "hex digit"},
		{"dash moved", "017f22e27-9b0-7cc3-98c4-dc0c0c07398f", false, "'-' at position 9"},
		{"non-hex", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", false, "hex digit"},
		{"sign", "+17f22e2-79b0-7cc3-98c4-dc0c0c07398f", false, "hex digit"},
		{"braces unclosed", "{" + lower + ")", false, "36 characters"},
		{"urn typo", "urn:uiid:" + lower, false, "36 characters"},
		{"v4", "9f5b2a8e-0c1d-4e8b-9c3a-1b2c3d4e5f60", false, "version 4"},
		{"nil", "00000000-0000-0000-0000-000000000000", false, "version 0"},
		{"max", "ffffffff-ffff-ffff-ffff-ffffffffffff", false, "version 15"},
		{"ncs variant", "017f22e2-79b0-7cc3-18c4-dc0c0c07398f", false, "ncs variant"},
		{"microsoft variant", "017f22e2-79b0-7cc3-c8c4-dc0c0c07398f", false, "microsoft variant"},
		{"future variant", "017f22e2-79b0-7cc3-e8c4-dc0c0c07398f", false, "future variant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := Parse(tc.in)
			if tc.ok {
				if err != nil || u != rfcBytes {
					t.Fatalf("Parse(%q) = %v, %v", tc.in, u, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, %v; want ErrInvalid", tc.in, u, err)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q does not say %q", err, tc.why)
			}
		})
	}
}

func TestFromBytes(t *testing.T) {
	if u, err := FromBytes(rfcBytes[:]); err != nil || u != rfcBytes {
		t.Errorf("FromBytes = %v, %v", u, err)
	}
	if _, err := FromBytes(rfcBytes[:15]); !errors.Is(err, ErrInvalid) {
		t.Errorf("15 bytes: %v", err)
	}
	if _, err := FromBytes(make([]byte, 16)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Nil UUID: %v", err)
	}
}

func TestTextAndJSON(t *testing.T) {
	b, err := rfcBytes.MarshalText()
	if err != nil || string(b) != strings.ToLower(rfcVector) {
		t.Fatalf("MarshalText = %s, %v", b, err)
	}
	buf := make([]byte, 0, 64)
	buf = append(buf, "id="...)
	if buf, _ = rfcBytes.AppendText(buf); string(buf) != "id="+strings.ToLower(rfcVector) {
		t.Errorf("AppendText = %s", buf)
	}
	type row struct{ ID UUID }
	j, err := json.Marshal(row{rfcBytes})
	if err != nil || string(j) != `{"ID":"`+strings.ToLower(rfcVector)+`"}` {
		t.Fatalf("json = %s, %v", j, err)
	}
	var back row
	if err := json.Unmarshal(j, &back); err != nil || back.ID != rfcBytes {
		t.Errorf("json back = %v, %v", back.ID, err)
	}
	if err := json.Unmarshal([]byte(`{"ID":"not-a-uuid"}`), &back); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestCompareAndVariant(t *testing.T) {
	a := rfcBytes
	b := rfcBytes
	b[15]++
	if a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Error("Compare")
	}
	if !(UUID{}).IsZero() || a.IsZero() {
		t.Error("IsZero")
	}
	for b8, want := range map[byte]Variant{0x00: VariantNCS, 0x7f: VariantNCS, 0x80: VariantRFC9562, 0xbf: VariantRFC9562, 0xc0: VariantMicrosoft, 0xdf: VariantMicrosoft, 0xe0: VariantFuture, 0xff: VariantFuture} {
		u := UUID{8: b8}
		if u.Variant() != want {
			t.Errorf("byte 8 %#x: Variant %v, want %v", b8, u.Variant(), want)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	s := strings.ToLower(rfcVector)
	text := []byte(s)
	var u UUID
	buf := make([]byte, 0, 36)
	if n := testing.AllocsPerRun(1000, func() {
		u, _ = Parse(s)
		_ = u.UnmarshalText(text)
		buf, _ = u.AppendText(buf[:0])
	}); n != 0 {
		t.Errorf("Parse, UnmarshalText and AppendText: %v allocs, want 0", n)
	}
}
