//go:build flurry_redis || flurry_full

package enginetags

import (
	_ "github.com/flurryid/flurry/lease/redisstore"
	_ "github.com/flurryid/flurry/segment/redisstore"
	_ "github.com/flurryid/flurry/server/redisstrategy"
)
