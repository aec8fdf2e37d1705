//go:build flurry_redis || flurry_full

package main

// The Redis engines: the lease and segment stores, and the server's redis
// strategy; they register themselves when imported. gen --redis, bench --redis
// and the redis command are in redis.go and redis_engine.go.
import (
	_ "github.com/flurryid/flurry/lease/redisstore"
	_ "github.com/flurryid/flurry/segment/redisstore"
	_ "github.com/flurryid/flurry/server/redisstrategy"
)
