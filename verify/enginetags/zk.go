//go:build flurry_zk || flurry_full

package enginetags

import (
	_ "github.com/flurryid/flurry/lease/leafzk"
	_ "github.com/flurryid/flurry/lease/zkstore"
)
