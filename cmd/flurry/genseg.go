package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/spf13/cobra"
)

// segFlags are gen's flags for serving a segment tag.
type segFlags struct {
	urls   []string
	tag    string
	runway time.Duration
}

func (sf *segFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&sf.urls, "segment", nil, "serve plain integer IDs of --tag from this segment store (see flurry segment --help); repeat it for several databases, each then hands out one residue class")
	f.StringVar(&sf.tag, "tag", "", "with --segment: the tag to serve (create it with flurry segment create)")
	f.DurationVar(&sf.runway, "runway", 0, "with --segment: keep this long of IDs buffered at the current rate, for database outages")
}

// check refuses flag combinations that make no sense with or without --segment.
func (sf *segFlags) check(cmd *cobra.Command) error {
	if len(sf.urls) == 0 {
		if cmd.Flags().Changed("tag") || cmd.Flags().Changed("runway") {
			return usageErr("--tag and --runway apply only with --segment")
		}
		return nil
	}
	if sf.tag == "" {
		return usageErr("--segment needs --tag, the tag to serve")
	}
	if err := segmentstore.CheckTagName(sf.tag); err != nil {
		return &usageError{err: err}
	}
	for _, name := range []string{"layout", "node", "lease", "overflow", "start", "max-drift", "random-below", "fixed", "node-from", "scope", "lease-fields", "ttl", "window", "order"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return usageErr("--%s does not apply with --segment: segment IDs are plain integers from a database", name)
		}
	}
	if sf.runway < 0 {
		return usageErr("--runway must not be negative")
	}
	return nil
}

// genSegment prints n IDs of a segment tag. On exit, also on Ctrl-C or a closed
// pipe, it hands the unused rest of its ranges back to the stores, so the next run
// continues without a gap.
func genSegment(ctx context.Context, sf *segFlags, n uint64, stdout, stderr io.Writer) (err error) {
	var stores []segment.Store
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	names := make([]string, len(sf.urls))
	for i, u := range sf.urls {
		names[i] = lease.RedactURL(u)
	}
	// The shifted clock only times the fetches (the dynamic step, the waits): the
	// IDs are the store's counters.
	clk, err := clockFromEnv(stderr, "gen --segment: segment IDs are counters in the store, which the shift does not move")
	if err != nil {
		return err
	}
	// With several stores, gen starts when any one opens; the others are opened in
	// the background and join when they answer.
	lines := newLineHandler(stderr)
	log := slog.New(lines)
	stores, err = segment.OpenStores(ctx, sf.urls, segmenturl.Open, segment.OpenOptions{Clock: clk, Logger: log})
	if err != nil {
		return err
	}
	a, err := segment.New(ctx, segment.Options{Stores: stores, Tag: sf.tag, Runway: sf.runway, Clock: clk, Logger: log})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := a.Close(cctx); cerr != nil {
			fmt.Fprintf(stderr, "flurry: gen: %s\n", oneLine(cerr))
			if err == nil {
				err = cerr
			}
		}
	}()
	lines.showInfo() // from now on also say when a store joins or answers again
	st := a.Stats()
	where := names[st.Store]
	if len(names) > 1 {
		where = fmt.Sprintf("%s (residue class %d of %d: %s)", where, st.Store, len(names), strings.Join(names, ", "))
	}
	fmt.Fprintf(stderr, "flurry: gen: serving tag %s from %s, first range %d..%d\n", sf.tag, where, st.CurrentFirst, st.CurrentLast)
	return generate(ctx, a, n, stdout, stderr, true, 0)
}
