package redisstrategy

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/redisgen"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/server/internal/strategy"
)

// TestRegistered: importing the package is what gives a program the redis
// strategy.
func TestRegistered(t *testing.T) {
	if _, ok := strategy.Lookup("redis"); !ok {
		t.Fatal("the redis strategy is not registered")
	}
	if err := engines.Check(engines.Strategy, "redis"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestClassify: the server learns what each redisgen failure means for its answer,
// through wrapping too.
func TestClassify(t *testing.T) {
	behind := &redisgen.ClockBehindError{Namespace: "n", Gap: 1500 * time.Millisecond}
	for _, tc := range []struct {
		err  error
		want strategy.Class
	}{
		{fmt.Errorf("wrapped: %w", behind), strategy.Class{Behind: true, Gap: 1500 * time.Millisecond}},
		{redisgen.ErrClockBehind, strategy.Class{Behind: true}},
		{fmt.Errorf("x: %w", redisgen.ErrExhausted), strategy.Class{Exhausted: true}},
		{redisgen.ErrClosed, strategy.Class{Closed: true}},
		{redisgen.ErrNodeUnset, strategy.Class{}},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
}

// TestOpenRefusesBadConfig: what the configuration check lets through only when
// it was skipped is refused before any connection.
func TestOpenRefusesBadConfig(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*config.Namespace{
		{Strategy: "redis"},
		{Strategy: "redis", Redis: &config.Redis{URL: "redis://127.0.0.1:1/0", Layout: "bogus"}},
	} {
		if src, err := open(ctx, strategy.Namespace{Name: "r", Config: c, Logger: slog.New(slog.DiscardHandler)}); err == nil {
			src.Close()
			t.Errorf("open(%+v) succeeded", c)
		}
	}
}
