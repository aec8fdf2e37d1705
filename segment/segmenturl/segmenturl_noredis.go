//go:build !(flurry_full || flurry_redis)

package segmenturl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
)

// addRedis adds nothing in a build without flurry_redis: Open refuses the family's
// schemes with an error that names the tag.
func addRedis(map[string]storeurl.Opener[segment.Store]) {}
