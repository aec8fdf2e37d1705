//go:build flurry_full || flurry_redis

package main

// What cmd/flurry needs of Redis in a build with flurry_redis (or flurry_full):
// gen --redis, bench --redis, the redis command (redis.go), and go-redis's logger.
// redis_lean.go has the lean build's refusals in their place.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/redisconn"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/redisgen"
)

const redisDefaultNamespace = redisgen.DefaultNamespace

// quietRedisLogger routes go-redis's log into flurry's line handler at debug
// level. go-redis writes through one process-wide logger, by default straight to
// stderr: lines such as "redis: ... pool.go:770: ... failed to dial after 5
// attempts" came before, and repeated, flurry's own one-line error. The stores
// return every failure that matters as an error, so main routes go-redis's lines
// into flurry's line handler at debug level, which it does not print. This is set
// in main and nowhere else: redis.SetLogger changes every Redis client in the
// process, which a library package must not do to its user's program.
func quietRedisLogger() {
	redis.SetLogger(redisconn.Logger(slog.New(newLineHandler(os.Stderr)), slog.LevelDebug))
}

// redisClockBehind reports whether err is Redis's clock standing behind its last
// tick, which gen waits out.
func redisClockBehind(err error) bool { return errors.Is(err, redisgen.ErrClockBehind) }

func genRedisRun(ctx context.Context, l *layout.Layout, rf *redisFlags, clk clock.Clock, n uint64, stdout, stderr io.Writer) error {
	g, err := redisgen.New(ctx, redisgen.Options{URL: rf.url, Namespace: rf.namespace, Layout: l, Clock: clk})
	if err != nil {
		return err
	}
	defer g.Close()
	// Pause rather than fail while Redis TIME stands behind its last tick.
	return generate(ctx, g, n, stdout, stderr, true, l.Rate())
}

// redisTarget sends INCRBY key count (INCR for 1).
type redisTarget struct {
	rdb   *redis.Client
	key   string
	count int64
	url   string
}

func newRedisTarget(raw string, bf *benchFlags) (benchTarget, error) {
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w; give one such as redis://127.0.0.1:6379/0", err)
	}
	opts.PoolSize = bf.concurrency
	opts.MinIdleConns = min(bf.concurrency, 64)
	u, _ := url.Parse(raw)
	return &redisTarget{rdb: redis.NewClient(opts), key: "flurry:bench:" + bf.namespace, count: int64(bf.count), url: u.Redacted()}, nil
}

func (t *redisTarget) name() string {
	if t.count == 1 {
		return "Redis INCR " + t.key + " at " + t.url
	}
	return fmt.Sprintf("Redis INCRBY %s %d at %s", t.key, t.count, t.url)
}

func (t *redisTarget) do(ctx context.Context, _ int) (int, error) {
	var err error
	if t.count == 1 {
		err = t.rdb.Incr(ctx, t.key).Err()
	} else {
		err = t.rdb.IncrBy(ctx, t.key, t.count).Err()
	}
	if err != nil {
		return 0, err
	}
	return int(t.count), nil
}

func (t *redisTarget) close() { t.rdb.Close() }
