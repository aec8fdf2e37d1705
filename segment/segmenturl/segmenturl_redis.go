//go:build flurry_full || flurry_redis

package segmenturl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/redisstore"
)

func addRedis(m map[string]storeurl.Opener[segment.Store]) {
	storeurl.Register(m, "Redis", storeurl.ParseOpen[segment.Store](redisstore.ParseURL, redisstore.Open))
}
