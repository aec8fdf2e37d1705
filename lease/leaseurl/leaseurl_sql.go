//go:build flurry_full || flurry_sql

package leaseurl

import (

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/sqlstore"
)

func addSQL(m map[string]storeurl.Opener[lease.Store]) {
	sql := storeurl.ParseOpen[lease.Store](sqlstore.ParseURL, sqlstore.Open)
	for _, s := range []string{"sqlite", "postgres", "postgresql", "mysql"} {
		m[s] = sql
	}
}
