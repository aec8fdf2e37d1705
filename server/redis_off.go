//go:build !(flurry_full || flurry_redis)

package server

import (
	"context"
	"errors"

	"github.com/flurryid/flurry/server/config"
)

// redis refuses the strategy in a build without flurry_redis.
func (b *builder) redis(context.Context, *namespace, *config.Redis) error {
	return errors.New("the redis strategy needs a flurry built with -tags flurry_redis (or flurry_full)")
}

// redisClass knows no error: this build issues none from Redis.
func redisClass(error) redisErr { return redisErr{} }
