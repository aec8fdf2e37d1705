//go:build flurry_sql || flurry_full

package enginetags

import (
	_ "github.com/flurryid/flurry/lease/sqlstore"
	_ "github.com/flurryid/flurry/segment/sqlstore"
)
