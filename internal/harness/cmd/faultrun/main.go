// Command faultrun runs the fault harness's full scenario set and writes the report:
//
//	go run ./internal/harness/cmd/faultrun -seed 1 -out docs/
//
// It needs root, iproute2, nftables, etcd-server, etcd-client, redis-server,
// redis-sentinel, redis-tools and postgresql (internal/harness/setup.sh installs them).
// It builds flurry and fhclient, starts the cluster in network namespaces prefixed
// "fh" (removing leftovers of a crashed run first), runs every fault kind once in an
// order the seed picks, checks every ID the clients received and writes
// <out>/reliability.md and <out>/reliability.png. It exits 1 when the checker finds
// an anomaly or a fault could not be applied. SIGINT tears everything down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flurryid/flurry/internal/harness"
)

func main() {
	var (
		seed     = flag.Uint64("seed", uint64(time.Now().UnixNano()%1_000_000), "seed of the schedule (kind order, nodes, durations)")
		outDir   = flag.String("out", "docs", "directory for reliability.md and reliability.png")
		kinds    = flag.String("kinds", "", "comma-separated fault kinds (default all: "+strings.Join(harness.KindNames(), ",")+")")
		ttl      = flag.Duration("ttl", 4*time.Second, "lease TTL of the snowflake namespaces")
		gap      = flag.Duration("gap", 4*time.Second, "load without a fault between faults, before the first and after the last")
		workers  = flag.Int("workers", 2, "workers per namespace per client host")
		count    = flag.Int("count", 1000, "IDs per request")
		maxReq   = flag.Int64("max-requests", 2_000_000, "bound on each client host's requests")
		rate     = flag.Float64("rate", 250, "requests per second of each client host (0: as fast as answered)")
		redis    = flag.String("redis", "auto", "how nodes reach Redis: sentinel, primary, or auto (sentinel when this flurry accepts redis+sentinel://)")
		keep     = flag.Bool("keep", false, "keep the run directory (logs, configurations, op files)")
		notes    = flag.String("note", "", "a paragraph added to the report (e.g. what build was tested and why)")
		prebuilt = flag.String("flurry", "", "use this flurry binary instead of building ./cmd/flurry (e.g. another branch's)")
	)
	flag.Parse()
	if err := run(*seed, *outDir, *kinds, *ttl, *gap, *workers, *count, *maxReq, *rate, *redis, *keep, *prebuilt, *notes); err != nil {
		fmt.Fprintln(os.Stderr, "faultrun:", err)
		os.Exit(1)
	}
}

func run(seed uint64, outDir, kinds string, ttl, gap time.Duration, workers, count int, maxReq int64, rate float64, redis string, keep bool, prebuilt, note string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	var ks []string
	if kinds != "" {
		ks = strings.Split(kinds, ",")
	}
	sc, err := harness.Plan("full", seed, ttl, gap, false, ks...)
	if err != nil {
		return err
	}
	sc.Load = harness.Load{Workers: workers, Count: count, Timeout: 2 * time.Second, MaxRequests: maxReq, Rate: rate}
	fmt.Print(sc.Describe())

	bin, err := os.MkdirTemp("", "fh-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	flurry, client := filepath.Join(bin, "flurry"), filepath.Join(bin, "fhclient")
	builds := [][2]string{{flurry, "./cmd/flurry"}, {client, "./internal/harness/cmd/fhclient"}}
	if prebuilt != "" {
		if flurry, err = filepath.Abs(prebuilt); err != nil {
			return err
		}
		builds = builds[1:]
	}
	for _, b := range builds {
		if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "flurry_full", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s (run from the repository's root): %v\n%s", b[1], err, out)
		}
	}
	if redis == "auto" {
		redis = harness.RedisMode(ctx, flurry)
	}
	c, err := harness.Start(ctx, harness.Options{Flurry: flurry, Client: client, LeaseTTL: ttl, RedisURL: redis, Log: os.Stdout, KeepDir: keep})
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun: cleanup:", err)
		}
		if keep {
			fmt.Println("faultrun: run directory kept:", c.Dir)
		}
	}()
	out, err := harness.Run(ctx, c, sc)
	if err != nil {
		return fmt.Errorf("%w (seed %d)", err, seed)
	}
	cmd := fmt.Sprintf("sudo go run ./internal/harness/cmd/faultrun -seed %d -out %s", seed, outDir)
	if kinds != "" {
		cmd += " -kinds " + kinds
	}
	if prebuilt != "" {
		cmd += " -flurry " + prebuilt
	}
	if ttl != 4*time.Second || gap != 4*time.Second || workers != 2 || count != 1000 || rate != 250 {
		cmd += fmt.Sprintf(" -ttl %s -gap %s -workers %d -count %d -rate %g", ttl, gap, workers, count, rate)
	}
	info := harness.ReportInfo{Command: cmd, RedisURL: c.RedisNodeURL(), TTL: ttl, Wall: time.Since(t0), Notes: harness.ReportNotes(redis)}
	if note != "" {
		info.Notes = append(info.Notes, note)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	md, err := os.Create(filepath.Join(outDir, "reliability.md"))
	if err != nil {
		return err
	}
	if err := harness.WriteReport(md, sc, out, info); err != nil {
		md.Close()
		return err
	}
	if err := md.Close(); err != nil {
		return err
	}
	png, err := os.Create(filepath.Join(outDir, "reliability.png"))
	if err != nil {
		return err
	}
	if err := harness.WritePlot(png, out); err != nil {
		png.Close()
		return err
	}
	if err := png.Close(); err != nil {
		return err
	}
	r := out.Result
	fmt.Printf("faultrun: %d requests, %.2f%% answered, %d IDs, %d duplicates, %d order violations, %d out of range; report in %s\n",
		r.Totals.Requests, 100*r.Totals.Availability(), r.Totals.IDs, r.Totals.Duplicates, r.Totals.OrderViolations, r.Totals.OutOfRange, outDir)
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
