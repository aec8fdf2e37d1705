//go:build flurry_full || flurry_sql

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
)

const sqlLong = `flurry sql has PostgreSQL (13 or later) or MariaDB (10.6 or later) make IDs of a
flurry layout itself: a function, flurry_next_id() unless --function names another,
returns the next ID as a bigint. On PostgreSQL it serves as a column DEFAULT; on
MariaDB, whose DEFAULT cannot call a stored function, a BEFORE INSERT trigger fills
the column; on both it works in INSERT ... SELECT of any number of rows. --table and
--column attach it to a column (repeat install for more columns).

The sequence field never wraps within a tick (a call waits for the next tick), a
transaction that rolls back never makes an ID reusable, a database clock behind the
last issued tick is waited out for at most --max-wait and then fails naming the gap,
and a copy of the database (a template copy, a restore) refuses to issue until
install --new-node gives it a node value of its own.

install leases the node value from a flurry lease store (--lease; by default the
database itself, in the table flurry_leases) and holds it until uninstall. Databases
whose IDs must never collide need one shared store: --lease URL. MySQL 8 has no
SEQUENCE objects or Aria tables, the non-transactional counters the function needs,
and is refused. docs/in-database.md has the design, the costs and failover.`

func newSQLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Have PostgreSQL or MariaDB make IDs itself: a function for column defaults",
		Long:  sqlLong,
		Example: `  flurry sql install postgres://app@db1:5432/shop --layout instagram --table orders --column id
  flurry sql install mysql://root@db2:3306/shop --layout instagram --lease postgres://ids@leases/ids --table orders --column id
  flurry sql status postgres://app@db1:5432/shop
  flurry sql emit --engine postgres --layout instagram --node shard=5 > flurry.sql
  flurry sql uninstall postgres://app@db1:5432/shop`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newSQLEmitCmd(), newSQLInstallCmd(), newSQLUninstallCmd(), newSQLStatusCmd())
	return cmd
}

// sqlFlags are the flags that shape the function, shared by emit and install.
type sqlFlags struct {
	layoutText, node, function, schema, table, column string
	maxWait                                           time.Duration
	grants                                            []string
}

func (sf *sqlFlags) register(cmd *cobra.Command, nodeHelp string) {
	f := cmd.Flags()
	f.StringVar(&sf.layoutText, "layout", "", "the IDs' layout: a preset name or a text form (flurry layouts)")
	f.StringVar(&sf.node, "node", "", nodeHelp)
	f.StringVar(&sf.function, "function", indb.DefaultFunction, "the function's name; its counter is named after it")
	f.StringVar(&sf.schema, "schema", "", "PostgreSQL: the schema of the function and its objects (default: the connection's current schema; emit: public)")
	f.StringVar(&sf.table, "table", "", "attach the function to this table's --column: its DEFAULT (PostgreSQL) or a BEFORE INSERT trigger (MariaDB)")
	f.StringVar(&sf.column, "column", "", "with --table: the column that takes the IDs")
	f.StringSliceVar(&sf.grants, "grant", nil, "PostgreSQL: let these roles call the function (SELECT on flurry_sql_state, USAGE, SELECT and UPDATE on its sequences); repeat or separate with commas")
	f.DurationVar(&sf.maxWait, "max-wait", 0, "how long one call may wait for the database clock to reach its ID's tick before it fails naming the gap (default: 1s, or two ticks if longer)")
}

func (sf *sqlFlags) options(e indb.Engine) (indb.Options, error) {
	o := indb.Options{Engine: e, Function: sf.function, Schema: sf.schema, MaxWait: sf.maxWait, Grants: sf.grants}
	if sf.layoutText == "" {
		return o, usageErr("--layout is required: a preset such as instagram, or a text form (flurry layouts)")
	}
	l, err := parseLayoutFlag(sf.layoutText)
	if err != nil {
		return o, err
	}
	o.Layout = l
	if (sf.table == "") != (sf.column == "") {
		return o, usageErr("--table and --column go together")
	}
	if sf.table != "" {
		o.Targets = []indb.Target{{Table: sf.table, Column: sf.column}}
	}
	if sf.node != "" {
		if o.Node, _, err = parseNodeFlag(l, "--node", sf.node); err != nil {
			return o, err
		}
	}
	return o, nil
}

func newSQLEmitCmd() *cobra.Command {
	var sf sqlFlags
	var engine string
	var uninstall bool
	cmd := &cobra.Command{
		Use:   "emit",
		Short: "Print the SQL that installs the function, for review or your own migrations",
		Long: `emit prints the statements install would run, for psql or the mariadb client, with
the node values given in --node: it leases nothing and connects nowhere. Applied by
hand, the function records this database's identity when the script runs and
refuses to issue in a copy, as an installed one does; the node value is yours to
keep unique (install leases one). --uninstall prints the statements that remove it.`,
		Example: `  flurry sql emit --engine postgres --layout instagram --node shard=5 | psql shop
  flurry sql emit --engine mariadb --layout instagram --node shard=6 --table orders --column id | mariadb shop`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := indb.ParseEngine(engine)
			if err != nil {
				return &usageError{err: err}
			}
			o, err := sf.options(e)
			if err != nil {
				return err
			}
			s, err := indb.Emit(o)
			if err != nil {
				return &usageError{err: err}
			}
			out := cmd.OutOrStdout()
			if uninstall {
				fmt.Fprint(out, s.UninstallText())
				return nil
			}
			fmt.Fprintf(out, "-- flurry sql: %s layout %s, node %s\n\n", e, o.Layout, nodeOrNone(o.Layout, o.Node))
			fmt.Fprint(out, s)
			return nil
		},
	}
	sf.register(cmd, "the node values, name=value pairs (default: all zero); each database needs its own")
	cmd.Flags().StringVar(&engine, "engine", "postgres", "postgres or mariadb")
	cmd.Flags().BoolVar(&uninstall, "uninstall", false, "print the statements that remove the function instead")
	return cmd
}

func nodeOrNone(l *layout.Layout, nv layout.NodeValues) string {
	if len(l.NodeFields()) == 0 {
		return "none"
	}
	return l.FormatNodeValues(nv)
}

// oneURL takes the database URL.
func oneURL(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageErr("%s takes one argument, the database URL (postgres://... or mysql://...)", cmd.CommandPath())
	}
	return nil
}

// openLeases opens the lease store: --lease, or the database itself.
func openLeases(ctx context.Context, leaseURL, dbURL string) (lease.Store, string, error) {
	if leaseURL == "" {
		st, err := leaseurl.Open(ctx, dbURL)
		if err != nil {
			return nil, "", fmt.Errorf("opening the database as its own lease store: %w", err)
		}
		return st, indb.SelfStore, nil
	}
	st, err := leaseurl.Open(ctx, leaseURL)
	if err != nil {
		return nil, "", err
	}
	return st, leaseurl.Redact(leaseURL), nil
}

func newSQLInstallCmd() *cobra.Command {
	var sf sqlFlags
	var leaseURL, scope, fields, owner string
	var fixed int64
	var newNode bool
	cmd := &cobra.Command{
		Use:   "install URL",
		Short: "Install the function in a database, leasing its node value",
		Long: `install makes the function and its counter in the database at URL, leases a node
value for it and holds it (pinned in the lease store) until uninstall, and records
the layout, the node value, the lease and the database's identity in the table
flurry_sql_state.

The lease store is --lease, or by default the database itself: the value is then
unique among this database and its copies, which see its record. Databases whose
IDs meet (shards of one table, a warehouse that merges them) need one store that
they all lease from, and so do flurry servers of the same IDs.

Run it again to upgrade the function or attach another column: the node value and
lease stay. In a copy of a database that has the function (a template copy, a
restore elsewhere) it refuses until --new-node, which leases the copy a value of
its own. A layout change needs uninstall first.`,
		Example: `  flurry sql install postgres://app@db1:5432/shop --layout instagram --table orders --column id
  flurry sql install mysql://root@db2:3306/shop --layout twitter --node datacenter=2 --lease etcd://10.0.0.5:2379
  flurry sql install postgres://app@copy:5432/shop --layout instagram --new-node`,
		Args: oneURL,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, e, where, err := indb.Open(ctx, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			o, err := sf.options(e)
			if err != nil {
				return err
			}
			st, leaseName, err := openLeases(ctx, leaseURL, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			io := indb.InstallOptions{Options: o, Leases: st, LeaseName: leaseName, Scope: scope, Owner: owner, NewNode: newNode}
			if fields != "" {
				io.Leased = strings.Split(fields, ",")
			}
			if cmd.Flags().Changed("fixed") {
				io.Fixed = &fixed
			}
			in, err := indb.Install(ctx, db, io)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case in.Upgraded:
				fmt.Fprintf(w, "upgraded %s in %s: layout %s, node %s (kept)\n", in.Function, where, in.Layout, in.NodeText)
			case in.Reowned:
				fmt.Fprintf(w, "this database is a copy; leased it node value %d (%s) of its own from %s\n", in.Lease.Value, in.NodeText, in.Lease.Store)
			default:
				fmt.Fprintf(w, "installed %s in %s: layout %s, node %s (value %d of scope %s, leased from %s)\n",
					in.Function, where, in.Layout, in.NodeText, in.Lease.Value, in.Lease.Scope, in.Lease.Store)
			}
			for _, t := range in.Targets {
				fmt.Fprintf(w, "  fills %s\n", t)
			}
			fmt.Fprintf(w, "decode its IDs with: flurry decode --layout '%s' ID\n", in.Layout)
			return nil
		},
	}
	sf.register(cmd, "values of node fields that are not leased, name=value pairs; they are added to the scope")
	f := cmd.Flags()
	f.StringVar(&leaseURL, "lease", "", "the lease store of the node value (default: the database itself); see flurry lease --help")
	f.StringVar(&scope, "scope", indb.DefaultScope, "the pool of node values in the lease store")
	f.StringVar(&fields, "lease-fields", "", "the leased node fields, comma-separated (default: every node field not named in --node)")
	f.Int64Var(&fixed, "fixed", 0, "lease exactly this value of the leased fields")
	f.StringVar(&owner, "owner", "", "the holder's name in the store's listings (default: the function, the database's identity and this host)")
	f.BoolVar(&newNode, "new-node", false, "in a copy of a database that has the function, lease the copy a node value of its own")
	return cmd
}

func newSQLUninstallCmd() *cobra.Command {
	var leaseURL, function, schema string
	cmd := &cobra.Command{
		Use:   "uninstall URL",
		Short: "Remove the function and release its node value",
		Long: `uninstall removes the function, the column defaults or triggers install made, the
counter and the function's row of flurry_sql_state, then releases the node value
in the lease store with a mark above the last ID, so that the value's next holder
starts above it. The store is --lease, or the database itself when install used it.
In a copy it removes the objects and leaves the lease alone: it is the original's.`,
		Example: `  flurry sql uninstall postgres://app@db1:5432/shop
  flurry sql uninstall mysql://root@db2:3306/shop --lease etcd://10.0.0.5:2379`,
		Args: oneURL,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, e, where, err := indb.Open(ctx, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			in, err := indb.Read(ctx, db, e, schema, function)
			if err != nil {
				return err
			}
			var st lease.Store
			if !in.Copy() && in.Lease.Token != "" {
				if leaseURL == "" && in.Lease.Store != indb.SelfStore {
					return usageErr("node value %d was leased from %s: give that store with --lease URL, so that uninstall can release it", in.Lease.Value, in.Lease.Store)
				}
				st, _, err = openLeases(ctx, leaseURL, args[0])
				if err != nil {
					return err
				}
				defer st.Close()
			}
			out, err := indb.Uninstall(ctx, db, e, indb.UninstallOptions{Function: function, Schema: schema, Leases: st})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "removed %s from %s\n", out.Function, where)
			switch {
			case out.Released:
				fmt.Fprintf(w, "released node value %d of scope %s with mark %s\n", out.Lease.Value, out.Lease.Scope, time.UnixMilli(out.Mark).UTC().Format(time.RFC3339Nano))
			case out.Copy():
				fmt.Fprintf(w, "this database was a copy: its node value's lease belongs to the original and was left alone\n")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&leaseURL, "lease", "", "the lease store of the node value (default: the database itself, when install used it)")
	f.StringVar(&function, "function", indb.DefaultFunction, "the function's name")
	f.StringVar(&schema, "schema", "", "PostgreSQL: the function's schema (default: the connection's current schema)")
	return cmd
}

func newSQLStatusCmd() *cobra.Command {
	var function, schema string
	cmd := &cobra.Command{
		Use:   "status URL",
		Short: "Show the function's layout, node value, lease and counter",
		Long: `status prints what flurry_sql_state records of the function: its layout (decode
its IDs with flurry decode --layout), node values, lease, the columns it fills, the
database identity it was installed in (and whether this database is a copy), and
the counter's last slot as an ID time.`,
		Example: `  flurry sql status postgres://app@db1:5432/shop`,
		Args:    oneURL,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, e, where, err := indb.Open(ctx, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			in, err := indb.Read(ctx, db, e, schema, function)
			if errors.Is(err, indb.ErrNotInstalled) {
				return fmt.Errorf("%s: %w", where, err)
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "function:  %s (%s)\n", in.Function, e)
			fmt.Fprintf(w, "layout:    %s\n", in.Layout)
			fmt.Fprintf(w, "node:      %s\n", in.NodeText)
			fmt.Fprintf(w, "lease:     value %d of scope %s in %s, owner %q\n", in.Lease.Value, in.Lease.Scope, in.Lease.Store, in.Lease.Owner)
			if !in.Until.IsZero() {
				fmt.Fprintf(w, "until:     %s\n", in.Until.Format(time.RFC3339))
			}
			for _, t := range in.Targets {
				fmt.Fprintf(w, "fills:     %s\n", t)
			}
			fmt.Fprintf(w, "identity:  %s\n", in.Identity)
			if in.Copy() {
				fmt.Fprintf(w, "COPY:      this database is %s: the function refuses; run flurry sql install --new-node\n", in.Here)
			}
			if in.Counter >= 0 {
				p := in.Layout.MaxSequence() + 1
				fmt.Fprintf(w, "counter:   tick %d (%s), seq %d\n", in.Counter/p, in.Layout.TickTime(in.Counter/p).Format(time.RFC3339Nano), in.Counter%p)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&function, "function", indb.DefaultFunction, "the function's name")
	cmd.Flags().StringVar(&schema, "schema", "", "PostgreSQL: the function's schema (default: the connection's current schema)")
	return cmd
}
