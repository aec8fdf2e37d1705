package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/redisgen"
	"github.com/spf13/cobra"
)

func newRedisCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redis",
		Short: "Set or show the node value of a Redis that issues IDs (gen --redis)",
		Long: `flurry gen --redis URL has the Redis server build each ID with a Lua script, from
its own clock (TIME) and a node value stored in it, in the hash {NAMESPACE}:node.
Every Redis server (primary with its replicas) that issues IDs of one namespace
needs a node value of its own: two with the same value issue the same IDs.

set-node stores the value, refusing one that does not fit the layout's node
fields; get-node prints it. A single node field takes a plain number (sonyflake:
42); several take name=value pairs, every field named (twitter:
datacenter=1,worker=3).`,
		Example: `  flurry redis set-node redis://10.0.0.1:6379/0 --namespace orders datacenter=1,worker=1
  flurry redis set-node redis://10.0.0.2:6379/0 --namespace orders datacenter=1,worker=2
  flurry redis get-node redis://10.0.0.1:6379/0 --namespace orders
  flurry gen --redis redis://10.0.0.1:6379/0 --namespace orders -n 1000`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newRedisNodeCmd(true), newRedisNodeCmd(false))
	return cmd
}

// newRedisNodeCmd returns set-node (set) or get-node.
func newRedisNodeCmd(set bool) *cobra.Command {
	var layoutText, namespace string
	cmd := &cobra.Command{
		Use:   "get-node URL",
		Short: "Print the node value a Redis holds for a namespace",
		Args:  redisArgs(1, "the Redis URL"),
	}
	if set {
		cmd.Use, cmd.Short = "set-node URL VALUE", "Store a Redis's node value for a namespace"
		cmd.Args = redisArgs(2, "the Redis URL and the node value")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		l, err := layout.Parse(layoutText)
		if err != nil {
			return err
		}
		var nv layout.NodeValues
		if set {
			if nv, err = parseNodeArg(l, args[1]); err != nil {
				return &usageError{err: err}
			}
		}
		ctx := cmd.Context()
		g, err := redisgen.New(ctx, redisgen.Options{URL: args[0], Namespace: namespace, Layout: l})
		if err != nil {
			return err
		}
		defer g.Close()
		if set {
			return g.SetNode(ctx, nv)
		}
		if nv, err = g.Node(ctx); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), l.FormatNodeValues(nv))
		return nil
	}
	f := cmd.Flags()
	f.StringVar(&layoutText, "layout", "twitter", "preset name or layout text form: its node fields are the hash's fields")
	f.StringVar(&namespace, "namespace", "", "the namespace (default \""+redisgen.DefaultNamespace+"\")")
	return cmd
}

// redisArgs refuses any other number of positional arguments as a usage error.
func redisArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s takes %s, got %d arguments", cmd.Name(), what, len(args))
		}
		return nil
	}
}

// parseNodeArg reads set-node's value: a plain number for a layout with one node
// field, or name=value pairs naming every node field.
func parseNodeArg(l *layout.Layout, s string) (layout.NodeValues, error) {
	var nv layout.NodeValues
	fields := l.NodeFields()
	if len(fields) == 0 {
		return nv, fmt.Errorf("layout %s has no node field, so only one Redis may issue its IDs and it needs no node value", l)
	}
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "=") {
		if len(fields) > 1 {
			return nv, fmt.Errorf("the layout has %d node fields; give each as name=value, e.g. %s", len(fields), l.FormatNodeValues(layout.NodeValues{}))
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nv, fmt.Errorf("node value %q is not a whole number", clipArg(s))
		}
		nv[0] = v
		if _, err := l.NodeMask(nv); err != nil {
			return nv, err
		}
		return nv, nil
	}
	nv, err := l.ParseNodeValues(s)
	if err != nil {
		return nv, err
	}
	given := map[string]bool{}
	for _, pair := range strings.Split(s, ",") {
		name, _, _ := strings.Cut(pair, "=")
		given[strings.TrimSpace(name)] = true
	}
	for _, f := range fields {
		if !given[f.Name] {
			return nv, fmt.Errorf("node field %s is not given; name every field, e.g. %s", f.Name, l.FormatNodeValues(nv))
		}
	}
	return nv, nil
}

func clipArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
