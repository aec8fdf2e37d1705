//go:build flurry_sql || flurry_full

package server

import "github.com/flurryid/flurry/segment/sqlstore"

// The store of tinyid's tables has what the tinyid routes assert it has.
var _ tinyStore = (*sqlstore.TinyID)(nil)
