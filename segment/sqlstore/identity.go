package sqlstore

import (
	"context"
	"fmt"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
)

// identity names h's table: the database server's own identifier, the database
// and the table. A SQLite file is private to its machine.
func identity(ctx context.Context, h *sqlconn.Handle) (segment.StoreIdentity, error) {
	id, private, err := h.Identity(ctx)
	if err != nil {
		return segment.StoreIdentity{}, fmt.Errorf("segment/sqlstore: %w", err)
	}
	return segment.StoreIdentity{ID: id, Private: private}, nil
}

// Identity names the store's table: the database server's own identifier, the
// database and the table.
func (s *Store) Identity(ctx context.Context) (segment.StoreIdentity, error) {
	return identity(ctx, s.h)
}

// Identity names Leaf's table, as Store's does.
func (s *LeafTable) Identity(ctx context.Context) (segment.StoreIdentity, error) {
	return identity(ctx, s.h)
}

// Identity names TinyID's table, as Store's does.
func (s *TinyID) Identity(ctx context.Context) (segment.StoreIdentity, error) {
	return identity(ctx, s.h)
}
