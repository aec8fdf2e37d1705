// Command simrun runs the deterministic simulation of flurry's lease protocol (the
// real lease.Session and snowflake.Generator on simulated nodes, clocks and stores
// with injected faults) and prints one line per seed; with -sweep, the table of the
// availability cost of fencing. It exits 1 when any run finds a violation.
//
//	go run ./verify/sim/cmd/simrun -nodes 10000 -hours 2 -seeds 20
//	go run ./verify/sim/cmd/simrun -seed 1234 -nodes 200 -hours 0.5   # replay one seed
//	go run ./verify/sim/cmd/simrun -sweep -nodes 300 -hours 1 -csv docs/correctness-availability.csv
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/plot"
	"github.com/flurryid/flurry/verify/sim"
)

func main() {
	def := sim.DefaultLeaseConfig()
	var (
		nodes   = flag.Int("nodes", def.Nodes, "simulated nodes")
		hours   = flag.Float64("hours", def.Duration.Hours(), "simulated hours per run")
		seeds   = flag.Int("seeds", 1, "runs, with seeds seed, seed+1, ...")
		seed    = flag.Uint64("seed", 1, "first seed")
		budget  = flag.Duration("budget", def.Budget, "outage budget (0: the lease package's default, or what -ttl allows)")
		ttl     = flag.Duration("ttl", def.TTL, "lease TTL (0: derived from the budget)")
		window  = flag.Duration("window", def.Window, "renewal interval (0: the lease package's default)")
		nojour  = flag.Bool("no-journal", false, "run every node without a journal (default: two nodes in three keep one)")
		ppm     = flag.Float64("ppm", def.PPM, "bound on each clock's rate error, ppm")
		offset  = flag.Duration("offset", def.Offset, "bound on each node's initial wall-clock offset")
		rate    = flag.Float64("rate", def.Rate, "ID requests per node per second")
		flaw    = flag.String("flaw", "", "try a known-bad variant: fence-from-reply, grant-before-reserve, above-without-plus-one, grant-before-journal, past-budget, shared-journal; with copied and restored journals: takeover-keeps-token, trust-copied-journal, trust-journal-behind-store")
		copies  = flag.Bool("copies", false, "copy journals of running and crashed nodes onto new nodes, and restore journals in place from earlier copies, the clock often back with them")
		sweep   = flag.Bool("sweep", false, "print the availability table over TTL, window and clock error")
		csvPath = flag.String("csv", "", "with -sweep, also write the table as CSV here")
		procs   = flag.Int("procs", 1, "GOMAXPROCS: the simulation runs one goroutine at a time, so 1 is fastest")
		seg     = flag.Bool("segment", false, "simulate segment allocators over several stores instead of leases")
		allocs  = flag.Int("allocators", sim.DefaultSegConfig().Allocators, "with -segment: allocators")
		nstores = flag.Int("stores", sim.DefaultSegConfig().Stores, "with -segment: stores (residue classes)")
		plotCSV = flag.String("plot", "", "draw the sweep's CSV (written by -sweep -csv) as a PNG chart at -png, and run nothing")
		pngPath = flag.String("png", "docs/correctness-availability.png", "with -plot: where to write the chart")
	)
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	if *plotCSV != "" {
		if err := drawSweep(*plotCSV, *pngPath); err != nil {
			fmt.Fprintln(os.Stderr, "simrun:", err)
			os.Exit(2)
		}
		return
	}
	base := def
	base.Nodes, base.Duration = *nodes, time.Duration(*hours*float64(time.Hour))
	base.Budget, base.TTL, base.Window, base.PPM, base.Offset, base.Rate = *budget, *ttl, *window, *ppm, *offset, *rate
	base.NoJournal = *nojour
	base.Clones, base.Restores = *copies, *copies
	switch *flaw {
	case "":
	case "fence-from-reply":
		base.Flaws = sim.FenceFromReply
	case "grant-before-reserve":
		base.Flaws = sim.GrantBeforeReserve
	case "above-without-plus-one":
		base.Flaws = sim.AboveWithoutPlusOne
	case "grant-before-journal":
		base.Flaws = sim.GrantBeforeJournal
	case "past-budget":
		base.Flaws = sim.PastBudget
	case "shared-journal":
		base.SharedJournal = true
	case "takeover-keeps-token":
		base.Seams, base.Clones, base.Restores = sim.TakeoverKeepsToken, true, true
	case "trust-copied-journal":
		base.Seams, base.Clones, base.Restores = sim.TrustCopies, true, true
	case "trust-journal-behind-store":
		base.Seams, base.Clones, base.Restores = sim.IgnoreEpoch, true, true
	default:
		fmt.Fprintf(os.Stderr, "simrun: unknown -flaw %q\n", *flaw)
		os.Exit(2)
	}
	if *seg {
		os.Exit(runSegment(*seed, *seeds, *allocs, *nstores, *hours))
	}
	if *sweep {
		os.Exit(runSweep(base, *seed, *seeds, *csvPath))
	}
	failed := false
	for i := 0; i < *seeds; i++ {
		cfg := base
		cfg.Seed = *seed + uint64(i)
		r, err := run(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "simrun:", err)
			os.Exit(2)
		}
		fmt.Println(r.Summary())
		for _, v := range r.Violations {
			fmt.Println("  ", v)
		}
		if r.Failed() {
			failed = true
			fmt.Printf("  replay: go run ./verify/sim/cmd/simrun -seed %d -seeds 1 -nodes %d -hours %g -budget %v -ttl %v -window %v -ppm %g -offset %v -rate %g -no-journal=%t%s\n",
				cfg.Seed, cfg.Nodes, cfg.Duration.Hours(), cfg.Budget, cfg.TTL, cfg.Window, cfg.PPM, cfg.Offset, cfg.Rate, cfg.NoJournal, flawFlag(*flaw))
		}
	}
	if failed {
		os.Exit(1)
	}
}

func flawFlag(f string) string {
	if f == "" {
		return ""
	}
	return " -flaw " + f
}

func run(cfg sim.LeaseConfig) (*sim.Report, error) {
	w, err := sim.NewLeaseWorld(cfg)
	if err != nil {
		return nil, err
	}
	return w.Run(), nil
}

// runSweep prints the unavailable fraction for TTL x window x clock error, each cell
// averaged over the seeds.
func runSweep(base sim.LeaseConfig, seed uint64, seeds int, csvPath string) int {
	type cell struct {
		ttl, window time.Duration
		ppm         float64
		offset      time.Duration
	}
	// TTL x window at the default clock error, then the clock error at the defaults.
	var cells []cell
	for _, ttl := range []time.Duration{3 * time.Second, 10 * time.Second, 30 * time.Second} {
		for _, win := range []time.Duration{500 * time.Millisecond, 2 * time.Second, 5 * time.Second} {
			cells = append(cells, cell{ttl, win, base.PPM, base.Offset})
		}
	}
	for _, ce := range []struct {
		ppm    float64
		offset time.Duration
	}{{0, 0}, {500, 5 * time.Second}, {2000, 30 * time.Second}} {
		cells = append(cells, cell{10 * time.Second, 2 * time.Second, ce.ppm, ce.offset})
	}
	var csv strings.Builder
	csv.WriteString("ttl_s,window_s,ppm,offset_s,unavailable_pct,acquiring_pct,fenced_pct,behind_pct,ids,violations\n")
	fmt.Printf("| TTL | Window | clock error (rate, offset) | unavailable | acquiring | fenced | clock behind | violations |\n|---|---|---|---|---|---|---|---|\n")
	status := 0
	for _, c := range cells {
		var acct sim.Availability
		var ids, viol int64
		for i := 0; i < seeds; i++ {
			cfg := base
			cfg.Seed = seed + uint64(i)
			cfg.TTL, cfg.Window, cfg.PPM, cfg.Offset = c.ttl, c.window, c.ppm, c.offset
			r, err := run(cfg)
			if err != nil {
				fmt.Fprintln(os.Stderr, "simrun:", err)
				return 2
			}
			acct.OK += r.Acct.OK
			acct.Acquiring += r.Acct.Acquiring
			acct.Fenced += r.Acct.Fenced
			acct.Behind += r.Acct.Behind
			ids += r.IDs
			for _, n := range r.ByKind {
				viol += n
			}
			if r.Failed() {
				status = 1
				fmt.Fprintln(os.Stderr, r.Summary())
			}
		}
		up := float64(acct.OK + acct.Acquiring + acct.Fenced + acct.Behind)
		pct := func(x int64) float64 { return 100 * float64(x) / up }
		fmt.Printf("| %v | %v | ±%g ppm, ±%v | %.3f%% | %.3f%% | %.3f%% | %.3f%% | %d |\n", c.ttl, c.window, c.ppm, c.offset,
			100*acct.Unavailable(), pct(acct.Acquiring), pct(acct.Fenced), pct(acct.Behind), viol)
		fmt.Fprintf(&csv, "%g,%g,%g,%g,%.4f,%.4f,%.4f,%.4f,%d,%d\n", c.ttl.Seconds(), c.window.Seconds(), c.ppm, c.offset.Seconds(),
			100*acct.Unavailable(), pct(acct.Acquiring), pct(acct.Fenced), pct(acct.Behind), ids, viol)
	}
	if csvPath != "" {
		if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "simrun:", err)
			return 2
		}
	}
	return status
}

func runSegment(seed uint64, seeds, allocs, stores int, hours float64) int {
	status := 0
	for i := 0; i < seeds; i++ {
		cfg := sim.DefaultSegConfig()
		cfg.Seed, cfg.Allocators, cfg.Stores = seed+uint64(i), allocs, stores
		cfg.Duration = time.Duration(hours * float64(time.Hour))
		w, err := sim.NewSegWorld(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "simrun:", err)
			return 2
		}
		r := w.Run()
		fmt.Println(r.Summary())
		for _, v := range r.Violations {
			fmt.Println("  ", v)
		}
		if len(r.ByKind) > 0 {
			status = 1
			fmt.Printf("  replay: go run ./verify/sim/cmd/simrun -segment -seed %d -seeds 1 -allocators %d -stores %d -hours %g\n", cfg.Seed, allocs, stores, hours)
		}
	}
	return status
}

// drawSweep charts the unavailable share against the TTL, one line per window, from
// the rows of the sweep at the default clock error.
func drawSweep(csvPath, pngPath string) error {
	f, err := os.Open(csvPath)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return err
	}
	def := sim.DefaultLeaseConfig()
	byWindow := map[float64][]plot.Point{}
	var windows []float64
	for _, r := range rows[1:] {
		v := make([]float64, 5)
		for i := range v {
			if v[i], err = strconv.ParseFloat(r[i], 64); err != nil {
				return fmt.Errorf("%s: %v", csvPath, err)
			}
		}
		ttl, win, ppm, unavail := v[0], v[1], v[2], v[4]
		if ppm != def.PPM {
			continue // the clock-error rows
		}
		if _, ok := byWindow[win]; !ok {
			windows = append(windows, win)
		}
		byWindow[win] = append(byWindow[win], plot.Point{X: ttl, Y: unavail})
	}
	sort.Float64s(windows)
	c := plot.Chart{Title: "Availability cost of fencing (simulated, same faults for every point)", XLabel: "lease TTL (s)", YLabel: "time a running node could not issue (%)"}
	for _, w := range windows {
		pts := byWindow[w]
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		c.Series = append(c.Series, plot.Series{Name: fmt.Sprintf("window %gs", w), Points: pts})
	}
	out, err := os.Create(pngPath)
	if err != nil {
		return err
	}
	if err := c.WritePNG(out, 900, 520); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
