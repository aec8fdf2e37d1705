// Package redisstrategy is the server's redis strategy: namespaces whose IDs the
// Redis server makes, with a Lua script from its own clock (package redisgen).
// Importing the package registers the strategy, as database/sql drivers do:
//
//	import _ "github.com/flurryid/flurry/server/redisstrategy"
//
// The flurry command imports it when built with -tags flurry_redis (or
// flurry_full); a program that runs server.New with a redis namespace imports it
// itself. Without it, such a namespace is refused with what to do. It is a
// package of its own so that a server without it does not link go-redis.
package redisstrategy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/redisgen"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/server/internal/strategy"
)

func init() {
	strategy.Register("redis", strategy.Strategy{Open: open, Classify: classify, Probe: probe})
}

// open makes the redisgen generator of a namespace, and writes the configured
// node value into Redis when one is given.
func open(ctx context.Context, ns strategy.Namespace) (strategy.Source, error) {
	c := ns.Config.Redis
	if c == nil {
		return nil, errors.New("strategy redis needs a redis: block with at least url: redis://host:6379/0")
	}
	l, err := parseLayout(c.Layout)
	if err != nil {
		return nil, err
	}
	g, err := redisgen.New(ctx, redisgen.Options{
		URL: c.URL, Namespace: cmp.Or(c.Key, ns.Name), Layout: l, BehindWait: c.BehindWait.Or(0),
		PlainWindow: c.PlainWindow.Or(0),
		Logger:      ns.Logger.With("namespace", ns.Name),
		// The configured node value is written at every start; a Redis that
		// lost it (restarted empty, a replica promoted before it synced)
		// gets it back the same way, above a floor, instead of refusing until
		// the next restart.
		RestoreNode: c.Node != "",
	})
	if err != nil {
		return nil, err
	}
	if err := checkRedis(ctx, g, c.Checks, ns.Logger.With("namespace", ns.Name)); err != nil {
		g.Close()
		return nil, err
	}
	if c.Node != "" {
		nv, err := l.ParseNodeValues(c.Node)
		if err == nil {
			err = g.SetNode(ctx, nv)
			if err != nil {
				err = fmt.Errorf("setting the node value in Redis: %w", err)
			}
		}
		if err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// probeTimeout bounds the probe of one namespace: a Redis that does not answer
// holds `flurry serve --check` no longer than this.
const probeTimeout = 5 * time.Second

// probe is checkRedis for `flurry serve --check`: it connects, reads the
// settings and returns one line per finding; checks: refuse makes a finding,
// or a server that would not tell or does not answer, an error.
func probe(ctx context.Context, ns strategy.Namespace) ([]string, error) {
	c := ns.Config.Redis
	if c == nil || c.Checks == "off" {
		return nil, nil
	}
	l, err := parseLayout(c.Layout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	g, err := redisgen.New(ctx, redisgen.Options{URL: c.URL, Namespace: cmp.Or(c.Key, ns.Name), Layout: l})
	var fs []redisgen.Finding
	if err == nil {
		fs, err = g.CheckRedis(ctx)
		g.Close()
	}
	var lines []string
	for _, f := range fs {
		lines = append(lines, "warning: Redis "+f.String())
	}
	if err != nil {
		lines = append(lines, "warning: could not check the Redis server's settings: "+err.Error())
	}
	if c.Checks == "refuse" && (len(fs) > 0 || err != nil) {
		return lines, errors.New("would not start: checks: refuse and the Redis server is not set up as docs/redisgen.md asks, or could not be checked")
	}
	return lines, nil
}

// checkRedis reads the primary's settings that the namespace's uniqueness
// relies on (redisgen.Generator.CheckRedis) and, by mode (config.Redis.Checks),
// logs each finding, or refuses to start with them all, or does not look.
// Refuse also refuses a server that would not tell.
func checkRedis(ctx context.Context, g *redisgen.Generator, mode string, log *slog.Logger) error {
	if mode == "off" {
		return nil
	}
	fs, err := g.CheckRedis(ctx)
	if mode == "refuse" && (len(fs) > 0 || err != nil) {
		var b strings.Builder
		b.WriteString("the Redis server is not set up as docs/redisgen.md asks (checks: refuse)")
		for _, f := range fs {
			b.WriteString("; " + f.String())
		}
		if err != nil {
			return fmt.Errorf("%s; %w; set checks: warn or off where CONFIG is not available", b.String(), err)
		}
		return errors.New(b.String())
	}
	for _, f := range fs {
		log.Warn("redisgen: the Redis server is not set up as docs/redisgen.md asks",
			"setting", f.Setting, "have", f.Have, "want", f.Want, "risk", f.Risk)
	}
	if err != nil {
		log.Warn("redisgen: could not check the Redis server's settings", "error", err)
	}
	return nil
}

func parseLayout(text string) (*layout.Layout, error) {
	return layout.Parse(cmp.Or(text, config.DefaultLayout))
}

// classify tells the server what a redisgen error means for its answer.
func classify(err error) strategy.Class {
	var c strategy.Class
	if cb, ok := errors.AsType[*redisgen.ClockBehindError](err); ok {
		c.Gap = cb.Gap
	}
	c.Exhausted = errors.Is(err, redisgen.ErrExhausted)
	c.Behind = errors.Is(err, redisgen.ErrClockBehind)
	c.Closed = errors.Is(err, redisgen.ErrClosed)
	return c
}
