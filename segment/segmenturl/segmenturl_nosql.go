//go:build !(flurry_full || flurry_sql)

package segmenturl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
)

// addSQL adds nothing in a build without flurry_sql: Open refuses the family's
// schemes with an error that names the tag.
func addSQL(map[string]storeurl.Opener[segment.Store], bool) {}
