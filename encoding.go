package flurry

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
)

// Encoding names a text form of an ID. Decimal is the ID's own form (String,
// MarshalText, JSON); the others are shorter forms for URLs and logs. Base2,
// Base32, Base36, Base58 and Base64 are byte for byte those of
// github.com/bwmarrin/snowflake, so IDs move between the two in any of them;
// Crockford32 is the digits of Douglas Crockford's Base32 (ULID's alphabet).
//
// Every form but Base64 writes the ID as a number, most significant digit
// first, without leading zeros; none carries a marker of its form, and many
// strings are valid in several ("10" is an ID in all but Base64), so a reader
// must be told which form it reads.
type Encoding uint8

// The encodings of an ID.
const (
	// Decimal is the ID in base 10: "1541815603606036480".
	Decimal Encoding = iota
	// Hex is the ID in base 16, lowercase, without a prefix or leading zeros:
	// "1565a11f6217a000". Parsing accepts either case.
	Hex
	// Base2 is the ID in binary, without leading zeros.
	Base2
	// Base32 is bwmarrin/snowflake's base 32: the z-base-32 alphabet
	// (ybndrfg8ejkmcpqxot1uwisza345h769) used as digits of a number, most
	// significant first, without padding. It is not RFC 4648 base32.
	Base32
	// Base36 is the ID in base 36, digits then lowercase letters. Parsing
	// accepts either case.
	Base36
	// Base58 is bwmarrin/snowflake's base 58: the alphabet
	// 123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ (Flickr's)
	// used as digits of a number, most significant first. It is case-sensitive.
	Base58
	// Base64 is bwmarrin/snowflake's base 64: standard padded base64 (RFC 4648
	// section 4) of the decimal text, "MTU0MTgxNTYwMzYwNjAzNjQ4MA==". Its
	// characters + / and = must be escaped in a URL query.
	Base64
	// Base62 is the ID in base 62 with the alphabet
	// 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz (digits,
	// then uppercase, then lowercase, so that the text sorts as the numbers
	// do among IDs of one length): at most 11 characters, URL-safe. It is
	// case-sensitive.
	Base62
	// Crockford32 is the ID in Douglas Crockford's Base32: the digits and
	// uppercase letters without I, L, O and U
	// (0123456789ABCDEFGHJKMNPQRSTVWXYZ), at most 13 characters, the alphabet
	// of ULID. Parsing follows Crockford's rules for people who retype an
	// ID: either case, and I or L read as 1, O as 0. It writes no check
	// symbol and parsing refuses hyphens, which an ID of 13 characters does
	// not need.
	Crockford32
)

const (
	alphabet32 = "ybndrfg8ejkmcpqxot1uwisza345h769"
	alphabet58 = "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
	alphabet36 = "0123456789abcdefghijklmnopqrstuvwxyz"
	alphabet62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	alphabetCF = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

// Digit tables: the value of each byte in an alphabet, 0xFF for a byte outside
// it. Built once and only read.
var (
	digits32 = digitTable(alphabet32, false)
	digits58 = digitTable(alphabet58, false)
	digits36 = digitTable(alphabet36, true)
	digits62 = digitTable(alphabet62, false)
	digitsCF = crockfordTable()
)

// crockfordTable is Crockford's decoding: its alphabet in either case, and the
// letters people mistake for digits read as those digits (I and L as 1, O as 0).
func crockfordTable() [256]byte {
	t := digitTable(alphabetCF, false)
	for i := 0; i < len(alphabetCF); i++ {
		if c := alphabetCF[i]; c >= 'A' && c <= 'Z' {
			t[c-'A'+'a'] = byte(i)
		}
	}
	for _, c := range "IiLl" {
		t[c] = 1
	}
	t['O'], t['o'] = 0, 0
	return t
}

func digitTable(alphabet string, foldCase bool) (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
		if c := alphabet[i]; foldCase && c >= 'a' && c <= 'z' {
			t[c-'a'+'A'] = byte(i)
		}
	}
	return t
}

var encodingNames = [...]string{
	Decimal: "decimal",
	Hex:     "hex",
	Base2:   "base2",
	Base32:  "base32",
	Base36:  "base36",
	Base58:  "base58",
	Base64:  "base64",
	Base62:  "base62",
	// Crockford32 is named for its alphabet's author, as its users know it.
	Crockford32: "crockford32",
}

// EncodingNames returns the names ParseEncoding accepts, in the order of the
// Encoding constants.
func EncodingNames() []string { return encodingNames[:] }

// String returns the encoding's name, as ParseEncoding accepts it.
func (e Encoding) String() string {
	if int(e) < len(encodingNames) {
		return encodingNames[e]
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ParseEncoding returns the encoding named name: decimal, hex, base2, base32,
// base36, base58, base64, base62 or crockford32 (case-insensitive). An unknown name gets an error
// that lists them.
func ParseEncoding(name string) (Encoding, error) {
	for i, n := range encodingNames {
		if strings.EqualFold(name, n) {
			return Encoding(i), nil
		}
	}
	return 0, fmt.Errorf("flurry: unknown ID encoding %q: use one of %s", clip(name), strings.Join(encodingNames[:], ", "))
}

// AppendID appends id in the encoding to b. It does not allocate when b has
// room (28 bytes hold any ID in any encoding but Base2, which needs 63).
func (e Encoding) AppendID(b []byte, id ID) []byte {
	switch e {
	case Hex:
		return appendDigits(b, uint64(id), 16, "0123456789abcdef")
	case Base2:
		return appendDigits(b, uint64(id), 2, "01")
	case Base32:
		return appendDigits(b, uint64(id), 32, alphabet32)
	case Base36:
		return appendDigits(b, uint64(id), 36, alphabet36)
	case Base58:
		return appendDigits(b, uint64(id), 58, alphabet58)
	case Base62:
		return appendDigits(b, uint64(id), 62, alphabet62)
	case Crockford32:
		return appendDigits(b, uint64(id), 32, alphabetCF)
	case Base64:
		var dec [20]byte
		d, _ := id.AppendText(dec[:0])
		return base64.StdEncoding.AppendEncode(b, d)
	default:
		b, _ = id.AppendText(b)
		return b
	}
}

// Format returns id in the encoding.
func (e Encoding) Format(id ID) string {
	var buf [64]byte
	return string(e.AppendID(buf[:0], id))
}

// appendDigits appends v in base, most significant digit first, with no
// leading zeros ("0"'s digit alone for zero).
func appendDigits(b []byte, v uint64, base uint64, alphabet string) []byte {
	var buf [64]byte
	i := len(buf)
	for {
		i--
		buf[i] = alphabet[v%base]
		v /= base
		if v == 0 {
			break
		}
	}
	return append(b, buf[i:]...)
}

// Parse parses s in the encoding. It refuses an empty string, a character
// outside the encoding's alphabet, signs and values above the int64 range,
// wrapping ErrInvalidID with the reason.
func (e Encoding) Parse(s string) (ID, error) {
	switch e {
	case Hex:
		return parseDigits(s, e, 16, nil)
	case Base2:
		return parseDigits(s, e, 2, nil)
	case Base32:
		return parseDigits(s, e, 32, &digits32)
	case Base36:
		return parseDigits(s, e, 36, &digits36)
	case Base58:
		return parseDigits(s, e, 58, &digits58)
	case Base62:
		return parseDigits(s, e, 62, &digits62)
	case Crockford32:
		return parseDigits(s, e, 32, &digitsCF)
	case Base64:
		if s == "" {
			return 0, fmt.Errorf("%w: empty", ErrInvalidID)
		}
		var buf [32]byte
		if base64.StdEncoding.DecodedLen(len(s)) > len(buf) || strings.ContainsAny(s, "\r\n") {
			return 0, fmt.Errorf("%w: %q is not the base64 of an ID: too long or split in lines", ErrInvalidID, clip(s))
		}
		d, err := base64.StdEncoding.Strict().AppendDecode(buf[:0], []byte(s))
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not base64 (standard alphabet, padded): %v", ErrInvalidID, clip(s), err)
		}
		id, err := ParseID(string(d))
		if err != nil {
			return 0, fmt.Errorf("%w: %q is base64 but does not hold a decimal ID", ErrInvalidID, clip(s))
		}
		return id, nil
	case Decimal:
		return ParseID(s)
	default:
		return 0, fmt.Errorf("%w: unknown encoding %v", ErrInvalidID, e)
	}
}

// parseDigits parses s as a number in base whose digit values are in table
// (nil: hexadecimal or binary digits, either case).
func parseDigits(s string, e Encoding, base uint64, table *[256]byte) (ID, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrInvalidID)
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		d := uint64(0xFF)
		switch {
		case table != nil:
			d = uint64(table[c])
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		}
		if d >= base {
			if c == '-' && i == 0 {
				return 0, fmt.Errorf("%w: %q: IDs are never negative", ErrInvalidID, clip(s))
			}
			return 0, fmt.Errorf("%w: %q is not %v: %q at byte %d is not one of its digits", ErrInvalidID, clip(s), e, rune(c), i)
		}
		if v > (math.MaxInt64-d)/base {
			return 0, fmt.Errorf("%w: %q is %v above the int64 range", ErrInvalidID, clip(s), e)
		}
		v = v*base + d
	}
	return ID(v), nil
}

// Hex returns the ID in hexadecimal (see [Hex]).
func (id ID) Hex() string { return Hex.Format(id) }

// Base2 returns the ID in binary (see [Base2]).
func (id ID) Base2() string { return Base2.Format(id) }

// Base32 returns the ID in bwmarrin/snowflake's base 32 (see [Base32]).
func (id ID) Base32() string { return Base32.Format(id) }

// Base36 returns the ID in base 36 (see [Base36]).
func (id ID) Base36() string { return Base36.Format(id) }

// Base58 returns the ID in bwmarrin/snowflake's base 58 (see [Base58]).
func (id ID) Base58() string { return Base58.Format(id) }

// Base64 returns bwmarrin/snowflake's base 64 of the ID (see [Base64]).
func (id ID) Base64() string { return Base64.Format(id) }

// Base62 returns the ID in base 62 (see [Base62]).
func (id ID) Base62() string { return Base62.Format(id) }

// Crockford32 returns the ID in Crockford's Base32 (see [Crockford32]).
func (id ID) Crockford32() string { return Crockford32.Format(id) }

// ParseHex parses the hexadecimal form of an ID (see [Encoding.Parse]).
func ParseHex(s string) (ID, error) { return Hex.Parse(s) }

// ParseBase2 parses the binary form of an ID (see [Encoding.Parse]).
func ParseBase2(s string) (ID, error) { return Base2.Parse(s) }

// ParseBase32 parses bwmarrin/snowflake's base 32 form of an ID (see [Encoding.Parse]).
func ParseBase32(s string) (ID, error) { return Base32.Parse(s) }

// ParseBase36 parses the base 36 form of an ID (see [Encoding.Parse]).
func ParseBase36(s string) (ID, error) { return Base36.Parse(s) }

// ParseBase58 parses bwmarrin/snowflake's base 58 form of an ID (see [Encoding.Parse]).
func ParseBase58(s string) (ID, error) { return Base58.Parse(s) }

// ParseBase64 parses bwmarrin/snowflake's base 64 form of an ID (see [Encoding.Parse]).
func ParseBase64(s string) (ID, error) { return Base64.Parse(s) }

// ParseBase62 parses the base 62 form of an ID (see [Encoding.Parse]).
func ParseBase62(s string) (ID, error) { return Base62.Parse(s) }

// ParseCrockford32 parses the Crockford Base32 form of an ID, in either case,
// with I and L read as 1 and O as 0 (see [Encoding.Parse]).
func ParseCrockford32(s string) (ID, error) { return Crockford32.Parse(s) }
