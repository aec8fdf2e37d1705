//go:build flurry_full || flurry_redis

package segmenturl

import (

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/redisstore"
)

func addRedis(m map[string]storeurl.Opener[segment.Store]) {
	rds := storeurl.ParseOpen[segment.Store](redisstore.ParseURL, redisstore.Open)
	// redis+sentinel: the primary of a master name, followed through failovers.
	for _, s := range []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel"} {
		m[s] = rds
	}
}
