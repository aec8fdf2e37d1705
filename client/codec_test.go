package client

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

func packIDs(ids ...int64) []byte {
	b := make([]byte, 0, 8*len(ids))
	for _, v := range ids {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

// nextSeeds are NextResponses as servers old and new send them, and broken ones.
func nextSeeds(t testing.TB) [][]byte {
	msgs := []*flurryv1.NextResponse{
		{Namespace: "default", Ids: []int64{1, 2, 3}},
		{Namespace: "default", PackedIds: packIDs(1, 2, 1<<62)},
		{Namespace: "u", TextIds: []string{"0190f0a8-0000-7000-8000-000000000000", "b"}},
		{Namespace: "both", Ids: []int64{5}, PackedIds: packIDs(6)},
		{Namespace: "short", PackedIds: []byte{1, 2, 3}},
		{Namespace: "neg", PackedIds: packIDs(-1, 0)},
		{},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	// Unpacked ids, an unknown field, a known field with another wire type, two
	// packed_ids (the last wins), a group, invalid UTF-8, a truncated varint.
	var b []byte
	b = protowire.AppendTag(b, fieldIDs, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 99, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	b = protowire.AppendTag(b, fieldNamespace, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	out = append(out, b)
	b = nil
	b = protowire.AppendTag(b, fieldPackedIDs, protowire.BytesType)
	b = protowire.AppendBytes(b, packIDs(1))
	b = protowire.AppendTag(b, fieldPackedIDs, protowire.BytesType)
	b = protowire.AppendBytes(b, packIDs(2, 3))
	b = protowire.AppendTag(b, 20, protowire.StartGroupType)
	b = protowire.AppendTag(b, 20, protowire.EndGroupType)
	out = append(out, b)
	b = nil
	b = protowire.AppendTag(b, fieldTextIDs, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0xff})
	out = append(out, b)
	b = nil
	b = protowire.AppendTag(b, fieldIDs, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0x80})
	out = append(out, b)
	// A field number above the largest valid one (found by mutation).
	out = append(out, []byte{0xc2, 0xbc, 0x95, 0x80, 0x1a, 0x01, 0xff})
	return out
}

// decodeReference is what the client did before its codec: proto.Unmarshal,
// then unpack.
func decodeReference(b []byte) (*flurryv1.NextResponse, error) {
	var m flurryv1.NextResponse
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, unpack(&m)
}

// checkDecodeNext fails t unless the codec decodes b as decodeReference does.
func checkDecodeNext(t *testing.T, b []byte) {
	t.Helper()
	want, werr := decodeReference(b)
	var got flurryv1.NextResponse
	err := codec{}.Unmarshal(slices.Clone(b), &got)
	if err == nil {
		err = unpack(&got)
	}
	if (err != nil) != (werr != nil) {
		t.Fatalf("%x: error %v, proto.Unmarshal+unpack %v", b, err, werr)
	}
	if err != nil {
		return
	}
	if got.Namespace != want.Namespace || !slices.Equal(got.Ids, want.Ids) || !slices.Equal(got.TextIds, want.TextIds) || len(got.PackedIds) != 0 {
		t.Fatalf("%x: decoded %v, proto.Unmarshal+unpack %v", b, &got, want)
	}
}

// TestDecodeNextMutations is FuzzDecodeNext's check over seeded random mutations
// of the seeds (bytes changed, cut, inserted, messages joined), so that it runs in
// every go test, not only under the fuzzing engine.
func TestDecodeNextMutations(t *testing.T) {
	seeds := nextSeeds(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		b := slices.Clone(seeds[r.IntN(len(seeds))])
		for k := r.IntN(4); k >= 0; k-- {
			switch r.IntN(4) {
			case 0:
				if len(b) > 0 {
					b[r.IntN(len(b))] = byte(r.IntN(256))
				}
			case 1:
				if len(b) > 0 {
					b = b[:r.IntN(len(b))]
				}
			case 2:
				b = append(b, seeds[r.IntN(len(seeds))]...)
			default:
				b = slices.Insert(b, r.IntN(len(b)+1), byte(r.IntN(256)))
			}
		}
		checkDecodeNext(t, b)
	}
}

// FuzzDecodeNext holds the codec's hand decoder of NextResponse to
// proto.Unmarshal followed by unpack: the same IDs, text IDs and namespace, and
// an error for the same inputs.
func FuzzDecodeNext(f *testing.F) {
	for _, b := range nextSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(checkDecodeNext)
}

// TestDecodeNextNoAlias checks that nothing decoded shares memory with connect's
// buffer, which connect reuses for the next message.
func TestDecodeNextNoAlias(t *testing.T) {
	for _, m := range []*flurryv1.NextResponse{
		{Namespace: "ns", PackedIds: packIDs(10, 11)},
		{Namespace: "ns", Ids: []int64{10, 11}},
		{Namespace: "ns", TextIds: []string{"a", "b"}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var got flurryv1.NextResponse
		if err := (codec{}).Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		before := proto.Clone(&got).(*flurryv1.NextResponse)
		clear(b)
		if !proto.Equal(&got, before) {
			t.Fatalf("decoded %v changed to %v when the input buffer was cleared", before, &got)
		}
		if len(m.TextIds) == 0 && !slices.Equal(got.Ids, []int64{10, 11}) {
			t.Fatalf("decoded %v from %v", &got, m)
		}
	}
}
