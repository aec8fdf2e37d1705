package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flurryid/flurry/verify/harness"
)

// runRegions is -kinds regions: the regions schedule on the two-region system,
// reported in <out>/reliability-regions.md and .png.
func runRegions(ctx context.Context, o opts, kinds []string, t0 time.Time) error {
	budget := o.budget
	if budget == 0 {
		budget = harness.DefaultBudget
	}
	sc, err := harness.PlanRegions("regions", o.seed, budget, o.gap, false, kinds...)
	if err != nil {
		return err
	}
	sc.Load = load(o)
	fmt.Print(sc.Describe())

	bins, cleanup, err := binaries(ctx, o, "fhrg-bin-", "fhclient")
	if err != nil {
		return err
	}
	defer cleanup()
	flurry, client := bins[0], bins[1]
	s, err := harness.StartRegions(ctx, harness.RegionsOptions{Prefix: o.prefix, Flurry: flurry, Client: client,
		LeaseTTL: o.ttl, Window: o.window, Budget: o.budget, Delay: o.regionDelay, Log: os.Stdout, KeepDir: o.keep})
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun: cleanup:", err)
		}
		if o.keep {
			fmt.Println("faultrun: run directory kept:", s.Dir)
		}
	}()
	out, err := harness.RunRegions(ctx, s, sc)
	if err != nil {
		return fmt.Errorf("%w (seed %d)", err, o.seed)
	}
	cmd := command(o) + leaseFlags(o)
	if o.gap != 4*time.Second {
		cmd += fmt.Sprintf(" -gap %s", o.gap)
	}
	if o.regionDelay != harness.DefaultRegionDelay {
		cmd += fmt.Sprintf(" -region-delay %s", o.regionDelay)
	}
	if o.workers != 2 || o.count != 1000 || o.rate != 250 {
		cmd += fmt.Sprintf(" -workers %d -count %d -rate %g", o.workers, o.count, o.rate)
	}
	if o.clients != 2 || o.callRate != 2000 {
		cmd += fmt.Sprintf(" -go-clients %d -go-rate %g", o.clients, o.callRate)
	}
	info := harness.ReportInfo{Command: cmd, LeaseTTL: o.ttl, Window: o.window, Budget: o.budget, Wall: time.Since(t0)}
	if o.note != "" {
		info.Notes = append(info.Notes, o.note)
	}
	if err := writeReport(o.outDir, "reliability-regions", func(w io.Writer) error { return harness.WriteRegionsReport(w, sc, out, info) },
		&out.Outcome); err != nil {
		return err
	}
	r := out.Result
	fmt.Printf("faultrun: %d IDs over both regions, %d duplicates, %d order violations, %d out of range; report in %s\n",
		r.Totals.IDs, r.Totals.Duplicates, r.Totals.OrderViolations, r.Totals.OutOfRange, o.outDir)
	for _, row := range out.Rows {
		if row.Window == "" {
			fmt.Printf("faultrun: region %s: %d Go-client calls, %.3f%% answered (%d IDs from the other region); %d raw requests to its nodes, %.3f%% answered\n",
				row.Region, row.Calls.Calls, 100*row.Calls.Availability(), row.Remote, row.Requests, 100*row.RawAvailability())
		}
	}
	return verdict(&out.Outcome, cmd)
}
