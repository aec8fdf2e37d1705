//go:build !(flurry_full || flurry_sql)

package leaseurl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
)

// addSQL adds nothing in a build without flurry_sql: Open refuses the family's
// schemes with an error that names the tag.
func addSQL(map[string]storeurl.Opener[lease.Store]) {}
