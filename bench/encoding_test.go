package bench

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	bwsnow "github.com/bwmarrin/snowflake"
	"github.com/oklog/ulid/v2"

	"github.com/flurryid/flurry"
)

// TestEncodingsMatchBwmarrin checks flurry's Base2, Base32, Base36, Base58 and
// Base64 against bwmarrin/snowflake's own encoders and parsers, both ways, for
// edge values, IDs from bwmarrin's generator and IDs spread over the whole
// int64 range.
func TestEncodingsMatchBwmarrin(t *testing.T) {
	ids := []int64{0, 1, 31, 32, 57, 58, 1<<41 - 1, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	node, err := bwsnow.NewNode(7)
	if err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		ids = append(ids, node.Generate().Int64())
	}
	for x := uint64(0x9E3779B97F4A7C15); len(ids) < 50000; x = x*6364136223846793005 + 1442695040888963407 {
		ids = append(ids, int64(x>>1), int64(x>>(1+x%62)))
	}
	type pair struct {
		e     flurry.Encoding
		enc   func(bwsnow.ID) string
		parse func(string) (bwsnow.ID, error)
	}
	pairs := []pair{
		{flurry.Base2, bwsnow.ID.Base2, bwsnow.ParseBase2},
		{flurry.Base32, bwsnow.ID.Base32, func(s string) (bwsnow.ID, error) { return bwsnow.ParseBase32([]byte(s)) }},
		{flurry.Base36, bwsnow.ID.Base36, bwsnow.ParseBase36},
		{flurry.Base58, bwsnow.ID.Base58, func(s string) (bwsnow.ID, error) { return bwsnow.ParseBase58([]byte(s)) }},
		{flurry.Base64, bwsnow.ID.Base64, bwsnow.ParseBase64},
		{flurry.Decimal, bwsnow.ID.String, bwsnow.ParseString},
	}
	for _, p := range pairs {
		for _, v := range ids {
			want := p.enc(bwsnow.ID(v))
			got := p.e.Format(flurry.ID(v))
			if got != want {
				t.Fatalf("%v of %d: flurry %q, bwmarrin %q", p.e, v, got, want)
			}
			back, err := p.parse(got)
			if err != nil || back.Int64() != v {
				t.Fatalf("bwmarrin parses flurry's %v %q as %d, %v; want %d", p.e, got, back, err, v)
			}
			fid, err := p.e.Parse(want)
			if err != nil || int64(fid) != v {
				t.Fatalf("flurry parses bwmarrin's %v %q as %d, %v; want %d", p.e, want, fid, err, v)
			}
		}
	}
	// The library's named methods are the same forms.
	id := flurry.ID(ids[20])
	bw := bwsnow.ID(ids[20])
	if id.Base58() != bw.Base58() || id.Base32() != bw.Base32() || id.Base64() != bw.Base64() ||
		id.Base36() != bw.Base36() || id.Base2() != bw.Base2() {
		t.Fatalf("methods of %d differ from bwmarrin's", id)
	}
}

// TestCrockford32MatchesULID checks flurry's Crockford32 against
// oklog/ulid, whose text is Crockford's Base32 of 128 bits in 26 characters: a
// ULID whose first 8 bytes are zero and whose last 8 are the ID is, with its
// leading zeros dropped, the ID's Crockford32, and ulid parses flurry's form
// padded back to 26 characters, in either case.
func TestCrockford32MatchesULID(t *testing.T) {
	ids := []int64{0, 1, 31, 32, 1<<41 - 1, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	for x := uint64(0x9E3779B97F4A7C15); len(ids) < 50000; x = x*6364136223846793005 + 1442695040888963407 {
		ids = append(ids, int64(x>>1), int64(x>>(1+x%62)))
	}
	for _, v := range ids {
		var u ulid.ULID
		binary.BigEndian.PutUint64(u[8:], uint64(v))
		want := strings.TrimLeft(u.String(), "0")
		if want == "" {
			want = "0"
		}
		got := flurry.Crockford32.Format(flurry.ID(v))
		if got != want {
			t.Fatalf("Crockford32 of %d: flurry %q, ulid %q", v, got, want)
		}
		for _, s := range []string{got, strings.ToLower(got)} {
			back, err := ulid.ParseStrict(strings.Repeat("0", ulid.EncodedSize-len(s)) + s)
			if err != nil || binary.BigEndian.Uint64(back[8:]) != uint64(v) || binary.BigEndian.Uint64(back[:8]) != 0 {
				t.Fatalf("ulid parses flurry's Crockford32 %q as %v, %v; want %d", s, back, err, v)
			}
		}
		if fid, err := flurry.Crockford32.Parse(want); err != nil || int64(fid) != v {
			t.Fatalf("flurry parses ulid's %q as %d, %v; want %d", want, fid, err, v)
		}
	}
}
