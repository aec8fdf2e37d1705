package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/spf13/cobra"
)

func newLeaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lease",
		Short: "Inspect the node-value leases of a lease store",
		Long: `A lease store hands each process that issues IDs (flurry gen --lease URL) a node
value of its own, for a time to live that the process renews, and keeps each
value's high-water mark: the latest time any holder may have issued an ID in, so
that the next holder of the value starts above it.

A store is named by a URL:
  file:///var/lib/flurry/leases                 files in a directory on this machine
                                                (processes of one machine only; not
                                                on a network file system)
  sqlite:///var/lib/flurry/leases.db            SQLite (*)
` + storeURLLines + `  zk://host:2181[,host:2181]/prefix             ZooKeeper (-tags flurry_zk)
  leafzk://host:2181/{leaf.name}?addr=ip:port   Meituan Leaf's worker registry in
                                                ZooKeeper (-tags flurry_zk): every
                                                worker ID, Leaf's servers and flurry's
` + storeURLNotes + `This binary understands: ` + strings.Join(leaseurl.Schemes(), ", ") + `.

Values live in scopes: gen's --scope (default "default") followed by the node
fields it does not lease, e.g. default/datacenter=1. A --fixed value is leased in
the same scope, so a configured holder and a pool holder can never share a value.
gen prints the scope it leases from.`,
		Example: `  flurry lease list file:///var/lib/flurry/leases
  flurry lease list --json --scope default/datacenter=1 file:///var/lib/flurry/leases`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newLeaseListCmd())
	return cmd
}

// scopeLister is a store that can name its scopes, as the file store can.
type scopeLister interface {
	Scopes() ([]string, error)
}

func newLeaseListCmd() *cobra.Command {
	var (
		scope  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list URL",
		Short: "List the held and free node values of a lease store",
		Long: `list prints one row per node value that has a record in the store: held now
(with its owner and expiry) or held before (free, with the mark it left).

MARK is the value's high-water mark: the next holder issues IDs only in ticks after
it. It is in RFC 3339 with milliseconds, UTC; MARK AGE is how long ago it was, or
"in 1.9s" for a mark that a live holder reserved ahead of now.

--scope lists one scope and the scopes under it (default/datacenter=1 is under
default). A file store lists every scope without it; other stores need it. --json
prints one JSON array instead of the table.`,
		Example: `  flurry lease list file:///var/lib/flurry/leases
  flurry lease list --scope default file:///var/lib/flurry/leases
  flurry lease list --json --scope orders/datacenter=1 file:///var/lib/flurry/leases`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("lease list takes one store URL, such as file:///var/lib/flurry/leases; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if cmd.Flags().Changed("scope") {
				if err := leasestore.CheckScope(scope); err != nil {
					return usageErr("--scope: %w", err)
				}
			}
			if err := fileStoreExists(args[0]); err != nil {
				return err
			}
			store, err := leaseurl.Open(ctx, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			var scopes []string
			if sl, ok := store.(scopeLister); ok {
				all, err := sl.Scopes()
				if err != nil {
					return fmt.Errorf("lease list: %w", err)
				}
				for _, s := range all {
					if scope == "" || s == scope || strings.HasPrefix(s, scope+"/") {
						scopes = append(scopes, s)
					}
				}
			} else if scope == "" {
				scheme := "this"
				if u, err := url.Parse(args[0]); err == nil {
					scheme = "a " + u.Scheme
				}
				return usageErr("--scope is required: %s store cannot list its scopes (gen prints the scope it leases from, e.g. default/datacenter=1)", scheme)
			} else {
				scopes = []string{scope}
			}
			var recs []lease.Record
			for _, s := range scopes {
				rs, err := store.List(ctx, s)
				if err != nil {
					return fmt.Errorf("lease list: %w", err)
				}
				recs = append(recs, rs...)
			}
			now := time.Now()
			out := cmd.OutOrStdout()
			if asJSON {
				return writeLeaseJSON(out, recs, now)
			}
			if len(recs) == 0 {
				where := "the store"
				if scope != "" {
					where = "scope " + scope
				}
				_, err := fmt.Fprintf(cmd.ErrOrStderr(), "flurry: lease list: no node value of %s has a record\n", where)
				return err
			}
			return writeLeaseTable(out, recs, now)
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "list this scope and the scopes under it (required unless the store is a file store)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array of records")
	return cmd
}

func writeLeaseTable(w io.Writer, recs []lease.Record, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tVALUE\tSTATE\tOWNER\tEXPIRES\tMARK\tMARK AGE")
	for _, r := range recs {
		state, owner, expires := "free", "-", "-"
		if r.Held {
			state, owner = "held", r.Owner
			expires = formatMs(r.Expires) + " (" + age(now.Sub(r.Expires)) + ")"
		}
		mark, markAge := "-", "-"
		if r.Mark > 0 {
			t := time.UnixMilli(r.Mark)
			mark, markAge = formatMs(t), age(now.Sub(t))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Scope, r.Value, state, owner, expires, mark, markAge)
	}
	return tw.Flush()
}

// leaseJSON is one record of lease list --json. Times are RFC 3339 with
// milliseconds, UTC; absent when there is none.
type leaseJSON struct {
	Scope   string `json:"scope"`
	Value   int64  `json:"value"`
	Held    bool   `json:"held"`
	Owner   string `json:"owner,omitempty"`
	Expires string `json:"expires,omitempty"`
	Mark    string `json:"mark,omitempty"`
	// MarkMs is the mark in Unix milliseconds, 0 when the value has none.
	MarkMs int64 `json:"mark_ms"`
	// MarkAgeMs is now minus the mark, negative for a mark ahead of now.
	MarkAgeMs *int64 `json:"mark_age_ms,omitempty"`
}

func writeLeaseJSON(w io.Writer, recs []lease.Record, now time.Time) error {
	rows := make([]leaseJSON, 0, len(recs))
	for _, r := range recs {
		row := leaseJSON{Scope: r.Scope, Value: r.Value, Held: r.Held, MarkMs: r.Mark}
		if r.Held {
			row.Owner, row.Expires = r.Owner, formatMs(r.Expires)
		}
		if r.Mark > 0 {
			row.Mark = formatMs(time.UnixMilli(r.Mark))
			a := now.UnixMilli() - r.Mark
			row.MarkAgeMs = &a
		}
		rows = append(rows, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// fileStoreExists refuses a file:// URL whose directory does not exist: opening the
// store would create it, and a listing should not create a store for a typo.
func fileStoreExists(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return nil // Open reports it
	}
	dir := u.Path
	if dir == "" {
		dir = u.Opaque
	}
	if dir == "" {
		return nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lease list: no lease store at %s: the directory does not exist", dir)
	}
	return nil
}
