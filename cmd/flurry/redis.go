//go:build flurry_full || flurry_redis

package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flurryid/flurry/internal/redisconn"
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

// layoutField is the field of the node hash where set-node records the layout it
// checked the value against, so get-node can read the value back without being told
// the layout. "@" is not allowed in a layout's field names, so it never collides
// with a node field, and the ID script reads only the node fields by name.
const layoutField = "@layout"

// newRedisNodeCmd returns set-node (set) or get-node.
func newRedisNodeCmd(set bool) *cobra.Command {
	var layoutText, namespace string
	cmd := &cobra.Command{
		Use:   "get-node URL",
		Short: "Print the node value a Redis holds for a namespace",
		Long: `get-node prints the node value stored in the Redis at URL for a namespace, as
name=value pairs in the layout's order.

Without --layout it reads the layout set-node recorded with the value; with
--layout it checks the stored value against that layout instead. A value stored by
hand or by an older flurry, with no layout recorded, is printed field by field in
name order, with a note on standard error.`,
		Example: `  flurry redis get-node redis://127.0.0.1:6379/0
  flurry redis get-node redis://10.0.0.1:6379/0 --namespace orders
  flurry redis get-node redis://10.0.0.1:6379/0 --namespace orders --layout sonyflake`,
		Args: redisArgs(1, "the Redis URL"),
	}
	if set {
		cmd.Use, cmd.Short = "set-node URL VALUE", "Store a Redis's node value for a namespace"
		cmd.Long = `set-node stores VALUE as the node value of the Redis at URL for a namespace
(the hash {NAMESPACE}:node), after checking that it fits the layout's node fields,
and prints what it wrote. It records the layout too, so get-node needs no --layout.

A layout with one node field takes a plain number (sonyflake: 42); one with several
takes name=value pairs naming every field (twitter: datacenter=1,worker=3). Every
Redis that issues IDs of one namespace needs a value of its own.`
		cmd.Example = `  flurry redis set-node redis://127.0.0.1:6379/0 datacenter=0,worker=1
  flurry redis set-node redis://10.0.0.1:6379/0 --namespace orders datacenter=1,worker=1
  flurry redis set-node redis://10.0.0.2:6379/0 --namespace orders --layout sonyflake 42`
		cmd.Args = redisArgs(2, "the Redis URL and the node value")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		layoutGiven := cmd.Flags().Changed("layout")
		l, err := parseLayoutFlag(layoutText)
		if err != nil {
			return err
		}
		var nv layout.NodeValues
		if set {
			if nv, err = parseNodeArg(l, args[1]); err != nil {
				return err
			}
		}
		ctx := cmd.Context()
		g, err := redisgen.New(ctx, redisgen.Options{URL: args[0], Namespace: namespace, Layout: l})
		if err != nil {
			return err
		}
		defer func() { g.Close() }()
		key := "{" + g.Namespace() + "}:node"
		c, err := redisconn.ParseClientURL(args[0])
		if err != nil {
			return err
		}
		client := c.NewClient()
		defer client.Close()
		if set {
			if err := g.SetNode(ctx, nv); err != nil {
				return err
			}
			if err := client.HSet(ctx, key, layoutField, l.String()).Err(); err != nil {
				return fmt.Errorf("namespace %q: the node value is set, but recording its layout failed (get-node will need --layout): %w", g.Namespace(), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set %s: node %s (layout %s) on %s\n", key, l.FormatNodeValues(nv), layoutText, c.Redacted)
			return nil
		}
		if !layoutGiven {
			h, err := client.HGetAll(ctx, key).Result()
			if err != nil {
				return fmt.Errorf("namespace %q: reading %s: %w", g.Namespace(), key, err)
			}
			if len(h) == 0 {
				return fmt.Errorf("namespace %q on %s has no node value; set one with flurry redis set-node", g.Namespace(), c.Redacted)
			}
			text, ok := h[layoutField]
			if !ok {
				names := make([]string, 0, len(h))
				for name := range h {
					names = append(names, name)
				}
				sort.Strings(names)
				pairs := make([]string, len(names))
				for i, name := range names {
					pairs[i] = name + "=" + h[name]
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "flurry: note: no layout is recorded with this value (set by hand or by an older flurry); pass --layout to check it")
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(pairs, ","))
				return nil
			}
			if l, err = layout.Parse(text); err != nil {
				return fmt.Errorf("namespace %q: %s holds layout %q, which is not a layout: %w", g.Namespace(), key, clipArg(text), err)
			}
			g.Close()
			if g, err = redisgen.New(ctx, redisgen.Options{URL: args[0], Namespace: namespace, Layout: l}); err != nil {
				return err
			}
		}
		if nv, err = g.Node(ctx); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), l.FormatNodeValues(nv))
		return nil
	}
	f := cmd.Flags()
	if set {
		f.StringVar(&layoutText, "layout", "twitter", "preset name or layout text form: its node fields are the hash's fields")
	} else {
		f.StringVar(&layoutText, "layout", "twitter", "check the value against this layout instead of the one set-node recorded")
	}
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

// parseNodeArg reads set-node's value as parseNodeFlag does, and also wants every
// node field named: a field left out would be stored as nothing, not as 0.
func parseNodeArg(l *layout.Layout, s string) (layout.NodeValues, error) {
	var nv layout.NodeValues
	fields := l.NodeFields()
	if len(fields) == 0 {
		return nv, usageErr("layout %s has no node field, so only one Redis may issue its IDs and it needs no node value", l)
	}
	nv, text, err := parseNodeFlag(l, "node value", s)
	if err != nil {
		return nv, err
	}
	given := map[string]bool{}
	for _, pair := range strings.Split(text, ",") {
		name, _, _ := strings.Cut(pair, "=")
		given[strings.TrimSpace(name)] = true
	}
	for _, f := range fields {
		if !given[f.Name] {
			return nv, usageErr("node field %s is not given; name every field, e.g. %s", f.Name, l.FormatNodeValues(nv))
		}
	}
	return nv, nil
}
