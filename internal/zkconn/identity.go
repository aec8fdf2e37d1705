package zkconn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Identity names the data under path's parent: a random value kept in the node at
// path, created by the first process that asks, prefixed with "zk:" and followed
// by the path. Every process on one ensemble reads the same.
func (c *Conn) Identity(ctx context.Context, path, random string) (string, error) {
	d, _, err := c.Get(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		if i := strings.LastIndex(path, "/"); i > 0 {
			if err := c.CreatePath(ctx, path[:i]); err != nil {
				return "", fmt.Errorf("creating %s: %w", path[:i], err)
			}
		}
		if _, err = c.Create(ctx, path, []byte(random), 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", fmt.Errorf("writing the store's identity at %s: %w", path, err)
		}
		d, _, err = c.Get(ctx, path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the store's identity at %s: %w", path, err)
	}
	return "zk:" + string(d) + path, nil
}
