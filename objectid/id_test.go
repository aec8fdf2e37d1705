package objectid

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// known is the ObjectId of MongoDB's documentation examples.
const known = "507f1f77bcf86cd799439011"

var knownID = ID{0x50, 0x7f, 0x1f, 0x77, 0xbc, 0xf8, 0x6c, 0xd7, 0x99, 0x43, 0x90, 0x11}

func TestKnownID(t *testing.T) {
	id, err := Parse(known)
	if err != nil || id != knownID {
		t.Fatalf("Parse = %x, %v", id[:], err)
	}
	if id.String() != known {
		t.Errorf("String = %s", id)
	}
	if want := time.Date(2012, 10, 17, 21, 13, 27, 0, time.UTC); !id.Time().Equal(want) || id.Unix() != 0x507f1f77 {
		t.Errorf("Time = %v, want %v", id.Time(), want)
	}
	if id.Random() != [5]byte{0xbc, 0xf8, 0x6c, 0xd7, 0x99} {
		t.Errorf("Random = %x", id.Random())
	}
	if id.Counter() != 0x439011 {
		t.Errorf("Counter = %#x", id.Counter())
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
		why      string
	}{
		{"lower", known, true, ""},
		{"upper", strings.ToUpper(known), true, ""},
		{"empty", "", false, "24 hex digits"},
		{"short", known[:23], false, "24 hex digits"},
		{"long", known + "0", false, "24 hex digits"},
		{"wrapped", `ObjectId("` + known + `")`, false, "24 hex digits"},
		{"space", " " + known[1:], false, "hex digit"},
		{"non-hex", known[:23] + "g", false, "position 23"},
		{"0x", "0x" + known[2:], false, "hex digit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := Parse(tc.in)
			if tc.ok {
				if err != nil || id != knownID {
					t.Fatalf("Parse(%q) = %v, %v", tc.in, id, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Parse(%q) = %v, %v; want ErrInvalid saying %q", tc.in, id, err, tc.why)
			}
		})
	}
}

func TestTextJSONBytes(t *testing.T) {
	if b, err := knownID.MarshalText(); err != nil || string(b) != known {
		t.Fatalf("MarshalText = %s, %v", b, err)
	}
	if b, _ := knownID.AppendText([]byte("id=")); string(b) != "id="+known {
		t.Errorf("AppendText = %s", b)
	}
	j, err := json.Marshal(map[string]ID{"_id": knownID})
	if err != nil || string(j) != `{"_id":"`+known+`"}` {
		t.Fatalf("json = %s, %v", j, err)
	}
	var back map[string]ID
	if err := json.Unmarshal(j, &back); err != nil || back["_id"] != knownID {
		t.Errorf("json back = %v, %v", back, err)
	}
	if id, err := FromBytes(knownID[:]); err != nil || id != knownID {
		t.Errorf("FromBytes = %v, %v", id, err)
	}
	if _, err := FromBytes(knownID[:11]); !errors.Is(err, ErrInvalid) {
		t.Errorf("FromBytes(11 bytes) = %v", err)
	}
	if !(ID{}).IsZero() || knownID.IsZero() || knownID.Compare(ID{}) != 1 {
		t.Error("IsZero/Compare")
	}
}

func TestParseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	text := []byte(known)
	var id ID
	buf := make([]byte, 0, 24)
	if n := testing.AllocsPerRun(1000, func() {
		id, _ = Parse(known)
		_ = id.UnmarshalText(text)
		buf, _ = id.AppendText(buf[:0])
	}); n != 0 {
		t.Errorf("%v allocs, want 0", n)
	}
}
