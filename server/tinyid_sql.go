//go:build flurry_full || flurry_sql

package server

import (
	"context"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/sqlstore"
)

// sqlTinyStore is the part of sqlstore.TinyID the tinyid routes use.
type sqlTinyStore interface {
	segment.Store
	Residue(ctx context.Context, tag string) (delta, remainder int64, err error)
	NextSegment(ctx context.Context, tag string) (sqlstore.Segment, error)
	Tokens(ctx context.Context) (map[string][]string, error)
}

type tinyAdapter struct{ sqlTinyStore }

func (a tinyAdapter) NextSegment(ctx context.Context, tag string) (tinySegment, error) {
	s, err := a.sqlTinyStore.NextSegment(ctx, tag)
	return tinySegment(s), err
}

// asTinyStore returns st as a tinyid store when it serves tinyid's tables.
func asTinyStore(st segment.Store) (tinyStore, bool) {
	ts, ok := st.(sqlTinyStore)
	if !ok {
		return nil, false
	}
	return tinyAdapter{ts}, true
}
