package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/spf13/cobra"
)

func newLayoutsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "layouts [LAYOUT...]",
		Short: "List the preset layouts and their facts",
		Long: `With no argument, layouts prints a table of the preset layouts: width, time unit,
epoch, the date the time field runs out, the most IDs per second one node can issue,
how many node values there are, and whether IDs stay below 2^53 (safe as JavaScript
numbers). A preset whose time has run out is marked EXHAUSTED: its IDs would wrap
or go negative.

With arguments (preset names or text forms), it prints every fact of each layout.`,
		Example: `  flurry layouts
  flurry layouts --json
  flurry layouts sonyflake
  flurry layouts time:41:1ms:2020-01-01T00:00:00Z,worker:10,seq:12`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			now := time.Now()
			var ls []*layout.Layout
			if len(args) == 0 {
				ls = layout.Presets()
			}
			for _, a := range args {
				l, err := parseLayoutArg("layouts", a)
				if err != nil {
					return err
				}
				ls = append(ls, l)
			}
			facts := make([]layout.Facts, len(ls))
			for i, l := range ls {
				facts[i] = l.Facts(now)
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(facts)
			case len(args) == 0:
				return writeLayoutTable(out, facts)
			}
			for i, f := range facts {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := writeFacts(out, "", f); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array of facts")
	return cmd
}

// writeLayoutTable writes one row per layout, then a note per exhausted layout.
func writeLayoutTable(w io.Writer, facts []layout.Facts) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBITS\tUNIT\tEPOCH\tRUNS OUT\tIDS/S/NODE\tNODES\tJS-SAFE\tSTATUS")
	for _, f := range facts {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			f.Name, f.Bits, f.Unit, formatTime(f.Epoch), f.Lifetime.Format(time.DateOnly),
			group(uint64(math.Round(f.RatePerNode))), group(f.Nodes), yesNo(f.JSSafe), status(f))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range facts {
		if f.Exhausted {
			fmt.Fprintf(w, "\n%s: EXHAUSTED: its time field ran out on %s; new IDs would wrap or go negative, so flurry refuses to issue them.\n",
				f.Name, f.Lifetime.Format(time.DateOnly))
		}
	}
	_, err := fmt.Fprintf(w, "\nDetails: flurry layouts NAME; machine-readable: flurry layouts --json\n")
	return err
}

func status(f layout.Facts) string {
	if f.Exhausted {
		return "EXHAUSTED (" + f.Lifetime.Format(time.DateOnly) + ")"
	}
	if f.YearsLeft < 1 {
		return fmt.Sprintf("RUNS OUT SOON, %.1f years left", f.YearsLeft)
	}
	return fmt.Sprintf("ok, %.1f years left", f.YearsLeft)
}

// writeFacts writes every fact of a layout, one "key: value" per line, each line
// starting with indent.
func writeFacts(w io.Writer, indent string, f layout.Facts) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	row := func(k, format string, a ...any) {
		fmt.Fprintf(tw, "%s%s:\t%s\n", indent, k, fmt.Sprintf(format, a...))
	}
	if f.Name != "" {
		row("name", "%s", f.Name)
	}
	row("layout", "%s", f.Layout)
	if f.About != "" {
		row("about", "%s", f.About)
	}
	row("bits", "%d", f.Bits)
	row("unit", "%s", f.Unit)
	row("epoch", "%s", formatTime(f.Epoch))
	if f.Exhausted {
		row("runs out", "%s (EXHAUSTED %.1f years ago)", formatTime(f.Lifetime), -f.YearsLeft)
	} else {
		row("runs out", "%s (%.1f years left)", formatTime(f.Lifetime), f.YearsLeft)
	}
	row("ids/s per node", "%s", group(uint64(math.Round(f.RatePerNode))))
	row("nodes", "%s", group(f.Nodes))
	if f.JSSafe {
		row("js-safe", "yes: every ID stays below 2^53")
	} else {
		row("js-safe", "no: IDs pass 2^53 from %s", formatTime(f.JSSafeUntil))
	}
	return tw.Flush()
}

func formatTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
