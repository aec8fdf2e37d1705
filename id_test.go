package flurry

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

func TestIDText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ID
		ok   bool
	}{
		{"0", 0, true},
		{"175928847299117063", 175928847299117063, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"", 0, false},
		{"12x", 0, false},
	} {
		got, err := ParseID(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseID(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidID) {
			t.Errorf("ParseID(%q) error %v does not wrap ErrInvalidID", tc.in, err)
		}
	}
}

func TestIDJSON(t *testing.T) {
	b, err := json.Marshal(struct{ ID ID }{175928847299117063})
	if err != nil || string(b) != `{"ID":"175928847299117063"}` {
		t.Errorf("marshal %s, %v", b, err)
	}
	for _, in := range []string{`"175928847299117063"`, `175928847299117063`} {
		var id ID
		if err := json.Unmarshal([]byte(in), &id); err != nil || id != 175928847299117063 {
			t.Errorf("unmarshal %s = %d, %v", in, id, err)
		}
	}
	var id ID
	if err := json.Unmarshal([]byte(`"-5"`), &id); err == nil {
		t.Error("negative ID accepted from JSON")
	}
}

func TestIDSQL(t *testing.T) {
	var id ID
	for _, src := range []any{int64(42), []byte("42"), "42"} {
		if err := id.Scan(src); err != nil || id != 42 {
			t.Errorf("Scan(%T) = %d, %v", src, id, err)
		}
	}
	for _, src := range []any{int64(-1), 4.2, nil} {
		if err := id.Scan(src); err == nil {
			t.Errorf("Scan(%#v) accepted", src)
		}
	}
	if v, err := ID(7).Value(); err != nil || v != int64(7) {
		t.Errorf("Value = %v, %v", v, err)
	}
}

func FuzzParseID(f *testing.F) {
	f.Add("175928847299117063")
	f.Add("-0")
	f.Add("99999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id < 0 || id.String() != strconv.FormatInt(int64(id), 10) {
			t.Fatalf("%q parsed to %d", s, id)
		}
		if back, err := ParseID(id.String()); err != nil || back != id {
			t.Fatalf("%q -> %d does not round-trip", s, id)
		}
	})
}
