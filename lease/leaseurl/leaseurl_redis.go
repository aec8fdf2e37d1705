//go:build flurry_full || flurry_redis

package leaseurl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/redisstore"
)

func addRedis(m map[string]storeurl.Opener[lease.Store]) {
	storeurl.Register(m, "Redis", storeurl.ParseOpen[lease.Store](redisstore.ParseURL, redisstore.Open))
}
