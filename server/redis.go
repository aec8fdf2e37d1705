package server

import (
	"context"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// redisSource is what a redis namespace holds: a *redisgen.Generator. The strategy
// is built in with the flurry_redis (or flurry_full) tag, in redis_on.go; the lean
// build refuses it in redis_off.go, so that it does not link go-redis.
type redisSource interface {
	flurry.Source
	Node(ctx context.Context) (layout.NodeValues, error)
	Close() error
}

// redisErr is what issueError needs to know of a redisgen error.
type redisErr struct {
	gap                       time.Duration // how far Redis's clock is behind
	exhausted, behind, closed bool
}
