//go:build flurry_full || flurry_redis

package buildtags

const redisBuilt = true
