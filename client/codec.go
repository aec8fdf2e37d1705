package client

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

// codec is connect's binary Protobuf codec, with NextResponse decoded by hand:
// packed_ids go straight from the read buffer into the []int64 the namespace's
// buffer hands out, one allocation and one pass, where proto.Unmarshal would
// first copy them into a []byte (about 800 KB per 100,000 IDs). It decodes what
// proto.Unmarshal followed by unpack does, and refuses what they refuse
// (FuzzDecodeNext holds it to that).
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) IsBinary() bool { return true }

func (codec) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("client: %T is not a Protobuf message", m)
	}
	return proto.Marshal(pm)
}

func (codec) MarshalAppend(dst []byte, m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("client: %T is not a Protobuf message", m)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, pm)
}

func (codec) Unmarshal(b []byte, m any) error {
	if r, ok := m.(*flurryv1.NextResponse); ok {
		if err := decodeNext(b, r); err != nil {
			return fmt.Errorf("unmarshal into %T: %w", m, err)
		}
		return nil
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("client: %T is not a Protobuf message", m)
	}
	if err := proto.Unmarshal(b, pm); err != nil {
		return fmt.Errorf("unmarshal into %T: %w", m, err)
	}
	return nil
}

// Field numbers of NextResponse.
const (
	fieldNamespace = 1
	fieldIDs       = 2
	fieldTextIDs   = 3
	fieldPackedIDs = 4
)

var errInvalidUTF8 = errors.New("string field is not valid UTF-8")

// decodeNext decodes a NextResponse into r (which it resets), with valid
// packed_ids moved into Ids as unpack does. b is connect's pooled buffer: nothing of r may
// alias it. As proto.Unmarshal does, a known field with another wire type is
// skipped as unknown, a repeated field's values add up, and the last value of a
// singular field wins; unknown fields are dropped (the client reads none).
func decodeNext(b []byte, r *flurryv1.NextResponse) error {
	r.Reset()
	var packed []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num > protowire.MaxValidNumber {
			return errors.New("invalid field number")
		}
		b = b[n:]
		switch {
		case num == fieldNamespace && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if !utf8.Valid(v) {
				return errInvalidUTF8
			}
			r.Namespace = string(v)
			b = b[n:]
		case num == fieldIDs && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			r.Ids = append(r.Ids, int64(v))
			b = b[n:]
		case num == fieldIDs && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			for len(v) > 0 {
				x, m := protowire.ConsumeVarint(v)
				if m < 0 {
					return protowire.ParseError(m)
				}
				r.Ids = append(r.Ids, int64(x))
				v = v[m:]
			}
		case num == fieldTextIDs && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if !utf8.Valid(v) {
				return errInvalidUTF8
			}
			r.TextIds = append(r.TextIds, string(v))
			b = b[n:]
		case num == fieldPackedIDs && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			packed = v
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	if len(packed) == 0 {
		return nil
	}
	if len(r.Ids) > 0 || len(packed)%8 != 0 {
		// Left for unpack to refuse: an error here would be connect's
		// INVALID_ARGUMENT, which the client takes for its own mistake rather
		// than the server's, and would not fail over.
		r.PackedIds = bytes.Clone(packed)
		return nil
	}
	r.Ids, _ = unpackIDs(packed)
	return nil
}
