package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/objectid"
	"github.com/flurryid/flurry/uuidv7"
)

// textGen adapts a generator of fixed-size IDs with a text form (uuidv7.UUID,
// objectid.ID) to textSource.
type textGen[T interface {
	AppendText([]byte) ([]byte, error)
}] struct {
	nextN  func(ctx context.Context, dst []T) (int, error)
	decode func(string) (*flurryv1.DecodeResponse, error)
}

func (g *textGen[T]) appendNext(ctx context.Context, dst []byte, n int, sep byte, quote bool) ([]byte, error) {
	buf := make([]T, min(n, 1024))
	for n > 0 {
		k, err := g.nextN(ctx, buf[:min(n, len(buf))])
		if err != nil {
			return dst, err
		}
		if k == 0 {
			return dst, errors.New("the generator returned no ID")
		}
		for _, id := range buf[:k] {
			if quote {
				dst = append(dst, '"')
				dst, _ = id.AppendText(dst)
				dst = append(dst, '"', sep)
			} else {
				dst, _ = id.AppendText(dst)
				dst = append(dst, sep)
			}
		}
		n -= k
	}
	return dst, nil
}

func (g *textGen[T]) decodeID(s string) (*flurryv1.DecodeResponse, error) { return g.decode(s) }

// builtinText returns the text strategies: uuidv7 (RFC 9562) and objectid
// (MongoDB's 12-byte ObjectId).
func builtinText(clk clock.Clock) map[string]func(ctx context.Context) (textSource, error) {
	return map[string]func(ctx context.Context) (textSource, error){
		"uuidv7": func(context.Context) (textSource, error) {
			g, err := uuidv7.New(uuidv7.Options{Clock: clk})
			if err != nil {
				return nil, err
			}
			return &textGen[uuidv7.UUID]{nextN: g.NextN, decode: decodeUUIDv7}, nil
		},
		"objectid": func(context.Context) (textSource, error) {
			g, err := objectid.New(objectid.Options{Clock: clk})
			if err != nil {
				return nil, err
			}
			return &textGen[objectid.ID]{nextN: g.NextN, decode: decodeObjectID}, nil
		},
	}
}

func decodeUUIDv7(s string) (*flurryv1.DecodeResponse, error) {
	u, err := uuidv7.Parse(s)
	if err != nil {
		return nil, err
	}
	if !u.IsV7() {
		return nil, fmt.Errorf("a version %d UUID, not version 7", u.Version())
	}
	t := u.Time()
	return &flurryv1.DecodeResponse{
		Id: u.String(), Time: t.UTC().Format("2006-01-02T15:04:05.000Z07:00"), UnixMs: t.UnixMilli(),
		Fields: []*flurryv1.Field{{Name: "version", Value: 7}},
	}, nil
}

func decodeObjectID(s string) (*flurryv1.DecodeResponse, error) {
	id, err := objectid.Parse(s)
	if err != nil {
		return nil, err
	}
	r := id.Random()
	var rv int64
	for _, b := range r {
		rv = rv<<8 | int64(b)
	}
	t := id.Time()
	return &flurryv1.DecodeResponse{
		Id: id.String(), Time: t.UTC().Format("2006-01-02T15:04:05.000Z07:00"), UnixMs: t.UnixMilli(),
		Fields: []*flurryv1.Field{{Name: "random", Value: rv}}, Sequence: int64(id.Counter()),
	}, nil
}
