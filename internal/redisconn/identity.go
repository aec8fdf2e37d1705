package redisconn

import (
	"context"
	"fmt"
)

// Identity names the data under the connection's prefix: a random value kept at
// key, set by the first process that asks (SETNX), prefixed with "redis:". Every
// process that uses one Redis (or its replicas after a failover, which carry the
// key) and one prefix reads the same; a run_id would change at each restart.
func (c *Conn) Identity(ctx context.Context, key string, random string) (id string, err error) {
	ctx, end := c.Call.Start(ctx)
	defer end(&err)
	if _, err := c.Client.SetNX(ctx, key, random, 0).Result(); err != nil {
		return "", fmt.Errorf("writing the store's identity at %s: %w", key, err)
	}
	v, err := c.Client.Get(ctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("reading the store's identity at %s: %w", key, err)
	}
	return "redis:" + v + "/" + c.Settings.Prefix, nil
}
