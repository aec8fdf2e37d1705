//go:build !(flurry_full || flurry_etcd)

package segmenturl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
)

// addEtcd adds nothing in a build without flurry_etcd: Open refuses the family's
// schemes with an error that names the tag.
func addEtcd(map[string]storeurl.Opener[segment.Store]) {}
