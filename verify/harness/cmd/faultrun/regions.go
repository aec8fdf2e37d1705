package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	clients := o.clients
	if clients == 0 {
		clients = -1
	}
	sc.Load = harness.Load{Workers: o.workers, Count: o.count, Timeout: 2 * time.Second, MaxRequests: o.maxReq, Rate: o.rate,
		Clients: clients, CallRate: o.callRate}
	fmt.Print(sc.Describe())

	bin, err := os.MkdirTemp("", "fhrg-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	flurry, client := filepath.Join(bin, "flurry"), filepath.Join(bin, "fhclient")
	builds := [][2]string{{flurry, "./cmd/flurry"}, {client, "./verify/harness/cmd/fhclient"}}
	if o.prebuilt != "" {
		if flurry, err = filepath.Abs(o.prebuilt); err != nil {
			return err
		}
		builds = builds[1:]
	}
	for _, b := range builds {
		if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "flurry_full", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s (run from the repository's root): %v\n%s", b[1], err, out)
		}
	}
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
	cmd := command(o)
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ttl", o.ttl}, {"window", o.window}, {"budget", o.budget}} {
		if d.v != 0 {
			cmd += fmt.Sprintf(" -%s %s", d.name, d.v)
		}
	}
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
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return err
	}
	md, err := os.Create(filepath.Join(o.outDir, "reliability-regions.md"))
	if err != nil {
		return err
	}
	if err := harness.WriteRegionsReport(md, sc, out, info); err != nil {
		md.Close()
		return err
	}
	if err := md.Close(); err != nil {
		return err
	}
	png, err := os.Create(filepath.Join(o.outDir, "reliability-regions.png"))
	if err != nil {
		return err
	}
	if err := harness.WritePlot(png, &out.Outcome); err != nil {
		png.Close()
		return err
	}
	if err := png.Close(); err != nil {
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
	bad := !r.OK() || len(out.Problems) > 0
	for _, pr := range out.Problems {
		fmt.Println("faultrun:", pr)
	}
	for _, fr := range out.Faults {
		if fr.Err != nil {
			fmt.Printf("faultrun: fault %q: %v\n", fr.Fault.Name, fr.Err)
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("the run found problems; replay with: %s", cmd)
	}
	return nil
}
