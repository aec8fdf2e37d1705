package main

import (
	"github.com/flurryid/flurry/layout"
	"github.com/spf13/cobra"
)

// redisFlags are gen's flags for issuing IDs inside Redis (package redisgen).
type redisFlags struct {
	url       string
	namespace string
}

func (rf *redisFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&rf.url, "redis", "", "issue the IDs inside this Redis, e.g. redis://127.0.0.1:6379/0: its clock and its node value (flurry redis set-node) make them")
	f.StringVar(&rf.namespace, "namespace", "", "with --redis: the namespace, whose keys are {NAME}:node and {NAME}:last (default \""+redisDefaultNamespace+"\")")
}

// on reports whether gen runs on Redis: with --redis, or with --namespace alone,
// which genRedis refuses.
func (rf *redisFlags) on(cmd *cobra.Command) bool {
	return rf.url != "" || cmd.Flags().Changed("redis") || cmd.Flags().Changed("namespace")
}

// genRedis prints n IDs that a Redis server builds with its Lua script. The node
// value and the clock are the server's, so no flag of the in-process generator
// applies.
func genRedis(cmd *cobra.Command, l *layout.Layout, rf *redisFlags, n uint64) error {
	if rf.url == "" {
		return usageErr("--namespace applies only with --redis URL")
	}
	for _, name := range []string{"node", "lease", "overflow", "start", "max-drift", "random-below", "fixed", "node-from", "scope", "lease-fields", "ttl", "window", "order", "segment", "tag", "runway"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return usageErr("--%s does not apply with --redis: the Redis server's clock and node value (flurry redis set-node) make the IDs", name)
		}
	}
	stderr := cmd.ErrOrStderr()
	// The shifted clock only times the plain path's window: Redis's TIME makes
	// the IDs.
	clk, err := clockFromEnv(stderr, "gen --redis: the IDs take the Redis server's clock, which the shift does not move")
	if err != nil {
		return err
	}
	return genRedisRun(cmd.Context(), l, rf, clk, n, cmd.OutOrStdout(), stderr)
}
