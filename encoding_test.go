package flurry

import (
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// reference returns id in e by a route that shares no code with encoding.go:
// strconv for the plain bases, math/big's digits mapped onto the alphabet for
// bwmarrin's base 32 and base 58, base 62 and Crockford's base 32,
// encoding/base64 of the decimal for base 64.
func reference(e Encoding, id ID) string {
	big62 := "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	mapped := func(base int, alphabet string) string {
		d := big.NewInt(int64(id)).Text(base)
		var sb strings.Builder
		for i := 0; i < len(d); i++ {
			sb.WriteByte(alphabet[strings.IndexByte(big62, d[i])])
		}
		return sb.String()
	}
	switch e {
	case Hex:
		return strconv.FormatInt(int64(id), 16)
	case Base2:
		return strconv.FormatInt(int64(id), 2)
	case Base32:
		return mapped(32, "ybndrfg8ejkmcpqxot1uwisza345h769")
	case Base36:
		return strconv.FormatInt(int64(id), 36)
	case Base58:
		return mapped(58, "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")
	case Base62:
		return mapped(62, refAlphabet62)
	case Crockford32:
		return mapped(32, refAlphabetCF)
	case Base64:
		return base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(int64(id), 10)))
	default:
		return strconv.FormatInt(int64(id), 10)
	}
}

// The alphabets as their definitions spell them, written out again so that a
// slip in encoding.go's copy shows.
const (
	refAlphabet62 = "0123456789" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "abcdefghijklmnopqrstuvwxyz"
	refAlphabetCF = "0123456789" + "ABCDEFGH" + "JK" + "MN" + "PQRST" + "VWXYZ" // no I, L, O, U
)

// referenceParse parses s as a number in e by math/big, sharing no code with
// encoding.go: each character's place in the alphabet (for Crockford's base 32
// after its own rules: upper case, I and L as 1, O as 0), then a range check.
// ok is false where Parse must refuse s. Only for the digit forms.
func referenceParse(e Encoding, s string) (id ID, ok bool) {
	var alphabet string
	base := int64(0)
	switch e {
	case Hex:
		alphabet, base, s = "0123456789abcdef", 16, strings.ToLower(s)
	case Base2:
		alphabet, base = "01", 2
	case Base32:
		alphabet, base = "ybndrfg8ejkmcpqxot1uwisza345h769", 32
	case Base36:
		alphabet, base, s = "0123456789abcdefghijklmnopqrstuvwxyz", 36, strings.ToLower(s)
	case Base58:
		alphabet, base = "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ", 58
	case Base62:
		alphabet, base = refAlphabet62, 62
	case Crockford32:
		alphabet, base = refAlphabetCF, 32
		s = strings.NewReplacer("I", "1", "L", "1", "O", "0").Replace(strings.ToUpper(s))
	default:
		panic("referenceParse: not a digit form: " + e.String())
	}
	if s == "" {
		return 0, false
	}
	v := new(big.Int)
	for _, r := range s {
		d := strings.IndexRune(alphabet, r)
		if d < 0 || r > 127 {
			return 0, false
		}
		v.Mul(v, big.NewInt(base)).Add(v, big.NewInt(int64(d)))
	}
	if !v.IsInt64() {
		return 0, false
	}
	return ID(v.Int64()), true
}

func allEncodings() []Encoding {
	var es []Encoding
	for i := range EncodingNames() {
		es = append(es, Encoding(i))
	}
	return es
}

func TestEncodingsMatchReference(t *testing.T) {
	ids := []ID{0, 1, 9, 10, 15, 16, 31, 32, 35, 36, 57, 58, 59, 63, 64, 1023, 1024, 3363, 3364,
		1541815603606036480, math.MaxInt64, math.MaxInt64 - 1, 1 << 62, 1<<62 - 1}
	for x := uint64(0x9E3779B97F4A7C15); len(ids) < 5000; x = x*6364136223846793005 + 1442695040888963407 {
		ids = append(ids, ID(x>>1), ID(x>>(1+x%62)))
	}
	for _, e := range allEncodings() {
		for _, id := range ids {
			want := reference(e, id)
			if got := e.Format(id); got != want {
				t.Fatalf("%v.Format(%d) = %q, want %q", e, id, got, want)
			}
			back, err := e.Parse(want)
			if err != nil || back != id {
				t.Fatalf("%v.Parse(%q) = %d, %v; want %d", e, want, back, err, id)
			}
		}
	}
}

func TestEncodingKnownValues(t *testing.T) {
	// bwmarrin/snowflake's own outputs for this ID (bench/ checks many more
	// against its code).
	id := ID(1541815603606036480)
	for _, c := range []struct {
		got, want string
	}{
		{id.Hex(), "1565a11f6217a000"},
		{id.Base36(), "bppc0m3ju134"},
		{id.Base64(), "MTU0MTgxNTYwMzYwNjAzNjQ4MA=="},
		{ID(0).Base58(), "1"},
		{ID(57).Base58(), "Z"},
		{ID(58).Base58(), "21"},
		{ID(0).Base32(), "y"},
		{ID(32).Base32(), "by"},
		{id.Base62(), "1ptWyK4WgZU"},
		{ID(61).Base62(), "z"},
		{ID(62).Base62(), "10"},
		{ID(math.MaxInt64).Base62(), "AzL8n0Y58m7"},
		{id.Crockford32(), "1ASD13XH1F800"},
		{ID(31).Crockford32(), "Z"},
		{ID(32).Crockford32(), "10"},
		{ID(math.MaxInt64).Crockford32(), "7ZZZZZZZZZZZZ"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestEncodingParseEitherCase(t *testing.T) {
	for _, c := range []struct {
		e    Encoding
		s    string
		want ID
	}{
		{Hex, "FF", 255}, {Hex, "aB", 171}, {Hex, "7FFFFFFFFFFFFFFF", math.MaxInt64},
		{Base36, "ZZ", 1295}, {Base36, "Zz", 1295}, {Base36, "1Y2P0IJ32E8E7", math.MaxInt64},
		{Base2, "0001", 1}, {Base58, "11112", 1}, // leading zero digits, as bwmarrin reads them
		{Base62, "0010", 62},
		// Crockford's rules for retyped IDs: either case, I and L as 1, O as 0.
		{Crockford32, "1asd13xh1f800", 1541815603606036480},
		{Crockford32, "1ASDI3XH1F8OO", 1541815603606036480},
		{Crockford32, "IASD13XH1F8oo", 1541815603606036480},
		{Crockford32, "lASDl3XHlF800", 1541815603606036480},
		{Crockford32, "L0", 32}, {Crockford32, "i0", 32}, {Crockford32, "o", 0},
		{Crockford32, "7zzzzzzzzzzzz", math.MaxInt64},
	} {
		if got, err := c.e.Parse(c.s); err != nil || got != c.want {
			t.Errorf("%v.Parse(%q) = %d, %v; want %d", c.e, c.s, got, err, c.want)
		}
	}
}

func TestEncodingRejects(t *testing.T) {
	for _, c := range []struct {
		e    Encoding
		s    string
		want string
	}{
		{Hex, "", "empty"},
		{Hex, "8000000000000000", "above the int64 range"},
		{Hex, "-1", "never negative"},
		{Hex, "0x10", `'x' at byte 1`},
		{Hex, "+1", "not hex"},
		{Base2, "2", "not base2"},
		{Base2, "1" + strings.Repeat("0", 63), "above the int64 range"},
		{Base32, "Y", "not base32"}, // bwmarrin's alphabet is lowercase
		{Base32, "0", "not base32"},
		{Base32, strings.Repeat("9", 13), "above the int64 range"},
		{Base36, "1y2p0ij32e8e8", "above the int64 range"},
		{Base36, " 1", "not base36"},
		{Base58, "0", "not base58"},
		{Base58, "l", "not base58"},
		{Base58, "I", "not base58"},
		{Base58, "O", "not base58"},
		{Base58, "npL6MjP8Qfd", "above the int64 range"},
		{Base58, "", "empty"},
		{Base62, "", "empty"},
		{Base62, "AzL8n0Y58m8", "above the int64 range"},
		{Base62, "-1", "never negative"},
		{Base62, "a_b", "not base62"},
		{Base62, "é", "not base62"},
		{Crockford32, "", "empty"},
		{Crockford32, "8000000000000", "above the int64 range"},
		{Crockford32, "U", "not crockford32"}, // U is left out of the alphabet
		{Crockford32, "u", "not crockford32"},
		{Crockford32, "1ASD-13XH", "not crockford32"},
		{Crockford32, "1ASD13XH1F800*", "not crockford32"}, // a check symbol
		{Crockford32, "-1", "never negative"},
		{Base64, "", "empty"},
		{Base64, "MTU0", "does not hold a decimal ID"}, // "154" is fine...
		{Base64, "LTE=", "does not hold a decimal ID"}, // "-1"
		{Base64, "MTU0MTgxNTYwMzYwNjAzNjQ4MA", "not base64"},
		{Base64, "MTU0MTgx\nNTYwMzYwNjAzNjQ4MA==", "split in lines"},
		{Base64, "OTk5OTk5OTk5OTk5OTk5OTk5OTk=", "does not hold a decimal ID"},
		{Decimal, "-5", "never negative"},
	} {
		id, err := c.e.Parse(c.s)
		if c.s == "MTU0" {
			if err != nil || id != 154 {
				t.Errorf("Base64.Parse(MTU0) = %d, %v; want 154", id, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v.Parse(%q) = %d, want an error", c.e, c.s, id)
			continue
		}
		if !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v.Parse(%q): %v; want ErrInvalidID saying %q", c.e, c.s, err, c.want)
		}
	}
}

func TestParseEncoding(t *testing.T) {
	for _, e := range allEncodings() {
		got, err := ParseEncoding(strings.ToUpper(e.String()))
		if err != nil || got != e {
			t.Errorf("ParseEncoding(%q) = %v, %v", e, got, err)
		}
	}
	_, err := ParseEncoding("base85")
	if err == nil || !strings.Contains(err.Error(), "base58") {
		t.Errorf("ParseEncoding(base85): %v; want the list of names", err)
	}
}

func TestEncodingAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	for _, e := range allEncodings() {
		n := testing.AllocsPerRun(100, func() { buf = e.AppendID(buf[:0], math.MaxInt64) })
		if n != 0 {
			t.Errorf("%v.AppendID allocates %v times", e, n)
		}
		if e == Base64 {
			continue // decodes into a decimal string first
		}
		n = testing.AllocsPerRun(100, func() {
			if _, err := e.Parse(e.Format(1541815603606036480)); err != nil {
				t.Fatal(err)
			}
		})
		if n > 1 { // Format's string
			t.Errorf("%v.Parse allocates %v times", e, n)
		}
	}
}

func FuzzEncodingParse(f *testing.F) {
	for _, e := range allEncodings() {
		f.Add(uint8(e), e.Format(1541815603606036480))
		f.Add(uint8(e), e.Format(math.MaxInt64))
	}
	f.Add(uint8(Base58), "npL6MjP8Qfd")
	f.Add(uint8(Base64), "LTE=")
	f.Fuzz(func(t *testing.T, n uint8, s string) {
		e := Encoding(n % uint8(len(EncodingNames())))
		id, err := e.Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("%v.Parse(%q): %v does not wrap ErrInvalidID", e, s, err)
			}
			return
		}
		if id < 0 {
			t.Fatalf("%v.Parse(%q) = %d", e, s, id)
		}
		f := e.Format(id)
		if f != reference(e, id) {
			t.Fatalf("%v.Format(%d) = %q, want %q", e, id, f, reference(e, id))
		}
		if back, err := e.Parse(f); err != nil || back != id {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, id, f, back, err)
		}
	})
}

func FuzzEncodingRoundTrip(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(math.MaxInt64))
	f.Add(int64(1541815603606036480))
	f.Fuzz(func(t *testing.T, v int64) {
		id := ID(v & math.MaxInt64)
		for _, e := range allEncodings() {
			s := e.Format(id)
			if s != reference(e, id) {
				t.Fatalf("%v.Format(%d) = %q, want %q", e, id, s, reference(e, id))
			}
			if back, err := e.Parse(s); err != nil || back != id {
				t.Fatalf("%v: %d -> %q -> %d, %v", e, id, s, back, err)
			}
		}
	})
}

// FuzzEncodingParseReference checks each digit form's parser against
// referenceParse: the same strings accepted, as the same IDs, and the rest
// refused with ErrInvalidID. It is what holds Crockford's lenient reading (case,
// I, L, O) and base 62's case-sensitivity to their definitions.
func FuzzEncodingParseReference(f *testing.F) {
	for _, e := range allEncodings() {
		f.Add(uint8(e), e.Format(1541815603606036480))
	}
	f.Add(uint8(Crockford32), "1asd13xh1f80o")
	f.Add(uint8(Crockford32), "IiLlOoUu")
	f.Add(uint8(Crockford32), "8000000000000")
	f.Add(uint8(Base62), "AzL8n0Y58m8")
	f.Add(uint8(Base62), "zZ09")
	f.Fuzz(func(t *testing.T, n uint8, s string) {
		e := Encoding(n % uint8(len(EncodingNames())))
		if e == Decimal || e == Base64 {
			e = Crockford32
		}
		want, ok := referenceParse(e, s)
		got, err := e.Parse(s)
		switch {
		case ok && (err != nil || got != want):
			t.Fatalf("%v.Parse(%q) = %d, %v; want %d", e, s, got, err, want)
		case !ok && err == nil:
			t.Fatalf("%v.Parse(%q) = %d; want an error", e, s, got)
		case !ok && !errors.Is(err, ErrInvalidID):
			t.Fatalf("%v.Parse(%q): %v does not wrap ErrInvalidID", e, s, err)
		}
	})
}
