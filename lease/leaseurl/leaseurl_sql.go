//go:build flurry_full || flurry_sql

package leaseurl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/sqlstore"
)

func addSQL(m map[string]storeurl.Opener[lease.Store]) {
	storeurl.Register(m, "SQL", storeurl.ParseOpen[lease.Store](sqlstore.ParseURL, sqlstore.Open))
}
