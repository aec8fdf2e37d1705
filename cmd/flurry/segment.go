package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	segfile "github.com/flurryid/flurry/segment/filestore"
	"github.com/flurryid/flurry/segment/segmentstore"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/spf13/cobra"
)

const segmentStoresHelp = `A segment store is named by a URL:
  file:///var/lib/flurry/segments               a directory on this machine
  sqlite:///var/lib/flurry/segments.db          SQLite, a file on this machine (*)
` + storeURLForms + `The SQL stores keep tags in a table shaped as Meituan Leaf's leaf_alloc (default
name flurry_segment); add ?table=leaf_alloc to serve an existing Leaf table as it is.`

func newSegmentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "segment",
		Short: "Create, list and tune the tags of a segment store",
		Long: `A segment store keeps, per tag (Leaf's biz_tag, such as "order"), the highest ID
handed out and a step. flurry gen --segment URL --tag order takes ranges of plain
integers (1, 2, 3, ...) from it, a step at a time, and serves them from memory;
several processes may share a tag and never receive one ID twice.

` + segmentStoresHelp + `
This binary understands: ` + strings.Join(segmenturl.Schemes(), ", ") + `.`,
		Example: `  flurry segment create file:///tmp/ids order --step 1000
  flurry segment list file:///tmp/ids
  flurry segment set-step file:///tmp/ids order 5000
  flurry gen --segment file:///tmp/ids --tag order -n 10`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newSegmentCreateCmd(), newSegmentListCmd(), newSegmentSetStepCmd())
	return cmd
}

func newSegmentCreateCmd() *cobra.Command {
	var (
		step  int64
		start int64
		desc  string
	)
	cmd := &cobra.Command{
		Use:   "create URL TAG",
		Short: "Create a tag",
		Long: `create makes a new tag in a segment store. Its first ID is --start plus 1; each
process serving it takes at least --step IDs at a time (more when IDs are asked
for fast: the step doubles while a range lasts under 15 minutes). A larger step
means fewer database round trips and a longer outage runway; IDs of a range a
process could not hand back (a crash, kill -9) are skipped, never reissued.`,
		Example: `  flurry segment create file:///tmp/ids order --step 1000
  flurry segment create 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable' mail --start 100000000`,
		Args: exactArgs(2, "segment create takes a store URL and a tag name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := segment.Tag{Name: args[1], Step: step, Max: start, Description: desc}
			if err := segmentstore.CheckCreate(t); err != nil {
				return &usageError{err: err}
			}
			store, err := segmenturl.Open(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Create(cmd.Context(), t); err != nil {
				if errors.Is(err, segment.ErrTagExists) {
					// The store's error repeats its package prefixes; say it once.
					return &argError{msg: fmt.Sprintf("segment create: tag %s exists already in %s; change its step with flurry segment set-step, or list the tags with flurry segment list",
						t.Name, storeurl.Redact(args[0])), err: err}
				}
				return fmt.Errorf("segment create: %w", err)
			}
			_, err = fmt.Fprintf(cmd.ErrOrStderr(), "flurry: created tag %s: first ID %d, step %d\n", t.Name, start+1, step)
			return err
		},
	}
	cmd.Flags().Int64Var(&step, "step", 1000, "the smallest range a process takes at a time")
	cmd.Flags().Int64Var(&start, "start", 0, "the first ID is this plus 1 (to continue above IDs issued elsewhere)")
	cmd.Flags().StringVar(&desc, "description", "", "free text for people")
	return cmd
}

func newSegmentSetStepCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set-step URL TAG STEP",
		Short: "Change a tag's step",
		Long: `set-step changes the smallest range processes take of a tag. Running processes
use the new step from their next range on.`,
		Example: `  flurry segment set-step file:///tmp/ids order 5000`,
		Args:    exactArgs(3, "segment set-step takes a store URL, a tag name and a step"),
		RunE: func(cmd *cobra.Command, args []string) error {
			step, err := strconv.ParseInt(args[2], 10, 64)
			if err != nil {
				return usageErr("step %q is not a whole number", args[2])
			}
			if err := segmentstore.CheckStep(step); err != nil {
				return &usageError{err: err}
			}
			if err := segmentstore.CheckTagName(args[1]); err != nil {
				return &usageError{err: err}
			}
			store, err := segmenturl.OpenExisting(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("segment %s: %w", cmd.Name(), err)
			}
			defer store.Close()
			if err := store.SetStep(cmd.Context(), args[1], step); err != nil {
				return fmt.Errorf("segment set-step: %w", err)
			}
			_, err = fmt.Fprintf(cmd.ErrOrStderr(), "flurry: tag %s: step %d\n", args[1], step)
			return err
		},
	}
}

func newSegmentListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list URL",
		Short: "List the tags of a segment store",
		Long: `list prints one row per tag: the highest ID handed out (MAX; the next range
starts above it), the configured STEP, how many handed-back IDs wait to be served
first (RETURNED), when the row last changed and its description. --json prints one
JSON array instead.`,
		Example: `  flurry segment list file:///tmp/ids
  flurry segment list --json 'mysql://root@127.0.0.1:3306/test?table=leaf_alloc'`,
		Args: exactArgs(1, "segment list takes one store URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Listing never creates anything: not the SQLite file, not the tables.
			if path, ok := sqlitePath(args[0]); ok {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("segment list: %s does not exist; create a tag first with flurry segment create URL TAG", path)
				}
			}
			if o, err := segfile.ParseURL(args[0]); err == nil {
				if has, err := segfile.HasState(o.Dir); err == nil && !has {
					return fmt.Errorf("segment list: %s holds no segment store; create a tag first with flurry segment create URL TAG", o.Dir)
				}
			}
			store, err := segmenturl.OpenExisting(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("segment %s: %w", cmd.Name(), err)
			}
			defer store.Close()
			tags, err := store.Tags(cmd.Context())
			if err != nil {
				return fmt.Errorf("segment list: %w (if no tag was ever created here, create one with flurry segment create URL TAG)", err)
			}
			if asJSON {
				return writeTagsJSON(cmd.OutOrStdout(), tags)
			}
			if len(tags) == 0 {
				_, err := fmt.Fprintln(cmd.ErrOrStderr(), "flurry: segment list: the store has no tag; create one with flurry segment create URL TAG")
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TAG\tMAX\tSTEP\tRETURNED\tUPDATED\tDESCRIPTION")
			for _, t := range tags {
				upd := "-"
				if !t.Updated.IsZero() {
					upd = formatMs(t.Updated)
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", t.Name, t.Max, t.Step, t.Returned, upd, t.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array of tags")
	return cmd
}

// tagJSON is one tag of segment list --json. Max is a string, as IDs are in JSON.
type tagJSON struct {
	Tag         string `json:"tag"`
	Max         string `json:"max"`
	Step        int64  `json:"step"`
	Returned    int64  `json:"returned"`
	Updated     string `json:"updated,omitempty"`
	Description string `json:"description,omitempty"`
}

func writeTagsJSON(w io.Writer, tags []segment.Tag) error {
	rows := make([]tagJSON, 0, len(tags))
	for _, t := range tags {
		row := tagJSON{Tag: t.Name, Max: strconv.FormatInt(t.Max, 10), Step: t.Step, Returned: t.Returned, Description: t.Description}
		if !t.Updated.IsZero() {
			row.Updated = formatMs(t.Updated.UTC().Truncate(time.Millisecond))
		}
		rows = append(rows, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// exactArgs refuses any other number of positional arguments as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s; got %d arguments", what, len(args))
		}
		return nil
	}
}

// storeURLForms is the part of the lease and segment commands' help that names the
// store URLs both kinds of store take, after each one's file and SQLite lines.
const storeURLForms = storeURLLines + storeURLNotes

const storeURLLines = `  postgres://user@host:5432/db?sslmode=disable  PostgreSQL (*)
  mysql://user:pass@host:3306/db                MySQL or MariaDB (*)
  redis://[:pass@]host:6379/0                   Redis (**)
  redis+sentinel://[:pass@]s1:26379,s2:26379/master   Redis through Sentinel (**)
  etcd://host:2379[,host:2379]/prefix           etcd (***)
`

const storeURLNotes = `(*) in a flurry built with -tags flurry_sql, (**) flurry_redis, (***) flurry_etcd;
-tags flurry_full has them all.
Store calls that get no answer fail after 5s (request_timeout=, dial_timeout=);
docs/high-availability.md has the replicated forms and what a failover can lose.
`
