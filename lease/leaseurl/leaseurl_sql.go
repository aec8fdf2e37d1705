//go:build flurry_full || flurry_sql

package leaseurl

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/sqlstore"
)

func addSQL(m map[string]storeurl.Opener[lease.Store]) {
	sql := func(ctx context.Context, u string) (lease.Store, error) {
		return sqlstore.Open(ctx, u, sqlstore.Options{})
	}
	for _, s := range []string{"sqlite", "postgres", "postgresql", "mysql"} {
		m[s] = sql
	}
}
