// Command faultrun runs the fault harness's full scenario set and writes the report:
//
//	go run ./verify/harness/cmd/faultrun -seed 11 -out docs/
//
// It needs root, iproute2, nftables, etcd-server, etcd-client, redis-server,
// redis-sentinel, redis-tools, postgresql, libzookeeper-java and a Java runtime
// (verify/harness/setup.sh installs them).
// It builds flurry and fhclient, starts the cluster in network namespaces prefixed
// "fh" (removing leftovers of a crashed run first), runs every fault kind of the
// default schedule once in an order the seed picks (about 10 minutes of faults and
// load, 11½ with the builds and the cluster's start), checks every ID both workloads
// received and writes <out>/reliability.md and <out>/reliability.png. It exits 1
// when the checker finds an anomaly or a fault could not be applied. SIGINT tears
// everything down.
//
// The snowflake namespaces run with flurry's lease defaults unless -ttl, -window or
// -budget set them. -kinds operations runs the operations nemesis alone (copied and
// restored data directories, a second deployment, servers on private stores, a
// silent Leaf server: about 2 minutes), -kinds default,operations the default
// schedule with it.
//
// -kinds regions runs the regions schedule on a system of its own instead: two
// regions -region-delay apart, each with its own 3-member etcd, three flurry nodes
// (the datacenter field fixed per region, the worker leased in the region) and a
// client host whose Go client has its region's servers first; the regions cut
// apart, a region cut off the other region and its clients (not its own), and a
// region's etcd down, each past the outage budget, a region's nodes killed, a
// region restarted with its clock behind (about 5½ minutes with flurry's
// defaults). It needs only etcd of the packages above, and writes
// <out>/reliability-regions.md and <out>/reliability-regions.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/flurryid/flurry/verify/harness"
)

func main() {
	var o opts
	flag.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()%1_000_000), "seed of the schedule (kind order, nodes, durations)")
	flag.StringVar(&o.outDir, "out", "docs", "directory for reliability.md and reliability.png")
	flag.StringVar(&o.kinds, "kinds", "", "comma-separated fault kinds (default: "+strings.Join(harness.DefaultKinds(), ",")+
		"; also: "+strings.Join(extraKinds(), ",")+"; groups: "+harness.DefaultGroup+" (the default schedule), "+harness.OperationsGroup+" (the operations nemesis: "+
		strings.Join(harness.OperationsKinds(), ",")+"))")
	flag.DurationVar(&o.ttl, "ttl", 0, "lease TTL of the snowflake namespaces (0: flurry's default, derived from the outage budget)")
	flag.DurationVar(&o.window, "window", 0, "reservation window of the snowflake namespaces (0: flurry's default)")
	flag.DurationVar(&o.budget, "budget", 0, "outage budget of the snowflake namespaces (0: flurry's default, "+harness.DefaultBudget.String()+")")
	flag.DurationVar(&o.gap, "gap", 4*time.Second, "load without a fault between faults, before the first and after the last")
	flag.IntVar(&o.workers, "workers", 2, "raw HTTP workers per namespace per client host")
	flag.IntVar(&o.count, "count", 1000, "IDs per raw HTTP request")
	flag.Int64Var(&o.maxReq, "max-requests", 2_000_000, "bound on each client host's raw HTTP requests")
	flag.Float64Var(&o.rate, "rate", 250, "raw HTTP requests per second of each client host (0: as fast as answered)")
	flag.IntVar(&o.clients, "go-clients", 2, "Go clients per client host (0: no Go-client workload)")
	flag.Float64Var(&o.callRate, "go-rate", 2000, "Next calls per second of each client host's Go clients together")
	flag.StringVar(&o.redis, "redis", "auto", "how nodes reach Redis: sentinel, primary, or auto (sentinel when this flurry accepts redis+sentinel://)")
	flag.BoolVar(&o.keep, "keep", false, "keep the run directory (logs, configurations, op files)")
	flag.StringVar(&o.note, "note", "", "a paragraph added to the report (e.g. what build was tested and why)")
	flag.StringVar(&o.prefix, "prefix", "", "prefix of the network namespaces (default fh, fhrg for the regions schedule; at most 8 characters)")
	flag.DurationVar(&o.regionDelay, "region-delay", harness.DefaultRegionDelay, "-kinds regions: one-way delay between the regions")
	flag.StringVar(&o.prebuilt, "flurry", "", "use this flurry binary instead of building ./cmd/flurry (e.g. another branch's)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "faultrun:", err)
		os.Exit(1)
	}
}

// opts are the command line.
type opts struct {
	seed                     uint64
	outDir, kinds            string
	ttl, window, budget, gap time.Duration
	workers, count, clients  int
	maxReq                   int64
	rate, callRate           float64
	redis, note, prebuilt    string
	prefix                   string
	regionDelay              time.Duration
	keep                     bool
}

func extraKinds() []string {
	var s []string
	for _, k := range harness.KindNames() {
		if !slices.Contains(harness.DefaultKinds(), k) {
			s = append(s, k)
		}
	}
	return s
}

func run(o opts) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	var ks []string
	if o.kinds != "" {
		ks = strings.Split(o.kinds, ",")
	}
	if harness.IsRegions(ks) {
		return runRegions(ctx, o, ks, t0)
	}
	sc, err := harness.Plan("full", o.seed, harness.LeaseTTL(o.ttl, o.budget), o.gap, false, ks...)
	if err != nil {
		return err
	}
	sc.Load = load(o)
	fmt.Print(sc.Describe())

	bins, cleanup, err := binaries(ctx, o, "fh-bin-", "fhclient", "fhleaf")
	if err != nil {
		return err
	}
	defer cleanup()
	flurry, client, leaf := bins[0], bins[1], bins[2]
	redis := o.redis
	if redis == "auto" {
		redis = harness.RedisMode(ctx, flurry)
	}
	c, err := harness.Start(ctx, harness.Options{Prefix: o.prefix, Flurry: flurry, Client: client, LeaseTTL: o.ttl, Window: o.window, Budget: o.budget,
		RedisURL: redis, Log: os.Stdout, KeepDir: o.keep, Leaf: leaf})
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun: cleanup:", err)
		}
		if o.keep {
			fmt.Println("faultrun: run directory kept:", c.Dir)
		}
	}()
	out, err := harness.Run(ctx, c, sc)
	if err != nil {
		return fmt.Errorf("%w (seed %d)", err, o.seed)
	}
	cmd := command(o) + leaseFlags(o)
	if o.gap != 4*time.Second || o.workers != 2 || o.count != 1000 || o.rate != 250 {
		cmd += fmt.Sprintf(" -gap %s -workers %d -count %d -rate %g", o.gap, o.workers, o.count, o.rate)
	}
	if o.clients != 2 || o.callRate != 2000 {
		cmd += fmt.Sprintf(" -go-clients %d -go-rate %g", o.clients, o.callRate)
	}
	info := harness.ReportInfo{Command: cmd, RedisURL: c.RedisNodeURL(), LeaseTTL: o.ttl, Window: o.window, Budget: o.budget,
		Wall: time.Since(t0), Notes: harness.ReportNotes(redis)}
	if o.note != "" {
		info.Notes = append(info.Notes, o.note)
	}
	if err := writeReport(o.outDir, "reliability", func(w io.Writer) error { return harness.WriteReport(w, sc, out, info) }, out); err != nil {
		return err
	}
	r := out.Result
	fmt.Printf("faultrun: %d requests, %.2f%% answered, %d IDs, %d duplicates, %d order violations, %d out of range; report in %s\n",
		r.Totals.Requests, 100*r.Totals.Availability(), r.Totals.IDs, r.Totals.Duplicates, r.Totals.OrderViolations, r.Totals.OutOfRange, o.outDir)
	return verdict(out, cmd)
}

// command is the command line that replays the run's schedule.
func command(o opts) string {
	cmd := fmt.Sprintf("sudo go run ./verify/harness/cmd/faultrun -seed %d -out %s", o.seed, o.outDir)
	if o.kinds != "" {
		cmd += " -kinds " + o.kinds
	}
	if o.prebuilt != "" {
		cmd += " -flurry " + o.prebuilt
	}
	return cmd
}
