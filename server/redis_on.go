//go:build flurry_full || flurry_redis

package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/flurryid/flurry/redisgen"
	"github.com/flurryid/flurry/server/config"
)

func (b *builder) redis(ctx context.Context, ns *namespace, c *config.Redis) error {
	l, err := parseLayout(c.Layout)
	if err != nil {
		return err
	}
	ns.layout = l
	key := c.Key
	if key == "" {
		key = ns.name
	}
	g, err := redisgen.New(ctx, redisgen.Options{
		URL: c.URL, Namespace: key, Layout: l, BehindWait: c.BehindWait.Or(0),
		PlainWindow: c.PlainWindow.Or(0),
		Logger:      b.opts.Logger.With("namespace", ns.name),
	})
	if err != nil {
		return err
	}
	ns.rgen, ns.ints = g, g
	if c.Node != "" {
		nv, err := l.ParseNodeValues(c.Node)
		if err != nil {
			return err
		}
		if err := g.SetNode(ctx, nv); err != nil {
			return fmt.Errorf("setting the node value in Redis: %w", err)
		}
	}
	return nil
}

func redisClass(err error) redisErr {
	var r redisErr
	if rb, ok := errors.AsType[*redisgen.ClockBehindError](err); ok {
		r.gap = rb.Gap
	}
	r.exhausted = errors.Is(err, redisgen.ErrExhausted)
	r.behind = errors.Is(err, redisgen.ErrClockBehind)
	r.closed = errors.Is(err, redisgen.ErrClosed)
	return r
}
