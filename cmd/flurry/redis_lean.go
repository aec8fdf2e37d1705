//go:build !(flurry_full || flurry_redis)

package main

// The lean build's stand-ins for what needs Redis (redis_engine.go, redis.go): each
// refuses with the build tag that adds it, so that the binary does not link go-redis.

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
)

// redisDefaultNamespace is redisgen.DefaultNamespace.
const redisDefaultNamespace = "flurry"

var errNoRedis = errors.New("a Redis URL needs a flurry built with -tags flurry_redis (or flurry_full)")

func quietRedisLogger() {}

func redisClockBehind(error) bool { return false }

func genRedisRun(context.Context, *layout.Layout, *redisFlags, clock.Clock, uint64, io.Writer, io.Writer) error {
	return errNoRedis
}

func newRedisTarget(string, *benchFlags) (benchTarget, error) { return nil, errNoRedis }

// newRedisCmd keeps the redis command and its subcommands in the lean build's help
// and man pages, each saying how to get it.
func newRedisCmd() *cobra.Command {
	const long = `flurry redis set-node and get-node store and show the node value of a Redis that
issues IDs (gen --redis). They need a flurry built with -tags flurry_redis (or
flurry_full):

  go install -tags flurry_full github.com/flurryid/flurry/cmd/flurry@latest`
	refuse := func(*cobra.Command, []string) error { return errNoRedis }
	cmd := &cobra.Command{
		Use:     "redis",
		Short:   "Set or show the node value of a Redis that issues IDs (needs -tags flurry_redis)",
		Long:    long,
		Example: `  flurry redis set-node redis://10.0.0.1:6379/0 --namespace orders datacenter=1,worker=1`,
		Args:    cobra.ArbitraryArgs,
		RunE:    refuse,
	}
	for _, sub := range []struct{ use, short, example string }{
		{"set-node URL VALUE", "Store the node value a Redis issues IDs with (needs -tags flurry_redis)", "  flurry redis set-node redis://127.0.0.1:6379/0 --namespace orders worker=3"},
		{"get-node URL", "Print the node value stored in a Redis (needs -tags flurry_redis)", "  flurry redis get-node redis://127.0.0.1:6379/0 --namespace orders"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: sub.use, Short: sub.short, Long: long, Example: sub.example,
			Args: cobra.ArbitraryArgs, RunE: refuse,
			// Its flags (--layout, --namespace) are a full build's: accept any, refuse the command.
			FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		})
	}
	return cmd
}
