// Command leasesize measures what node-value leases cost a lease store: it starts N
// lease sessions (each with its own generator, as N flurry processes would) against
// one real store, lets them renew for a bounded time, and reports the store calls
// per second per node by kind, their latency, failures, how long the N sessions took
// to start, and the CPU the engine's server processes used meanwhile.
//
//	cd bench
//	go run -tags flurry_full ./leasesize -store etcd://127.0.0.1:2379/sizing \
//		-sessions 1000 -duration 60s -scope-mode own -cpu-pid "$(pgrep -x etcd)" \
//		-metrics http://127.0.0.1:2379/metrics
//
// Every call goes through a counting lease.Store that wraps the store
// leaseurl.Open returns. All sessions share that store's connections, as they
// would not in a fleet of processes: the run measures the engine's cost per call,
// not the cost of a connection per node. It ends by closing every session (a
// Release each) and deleting the marks the run left (keys, rows or files of its
// scopes), unless -keep.
//
// The engines are behind build tags: build with -tags flurry_full (or the engine's
// own tag) for anything but the file store.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/snowflake"
)

// Bounds of a run: it must end, and it must not take the engine or the machine
// from the others that share them for longer than asked.
const (
	maxSessions    = 20000
	maxDuration    = 10 * time.Minute
	maxBaseline    = time.Minute
	maxStartWait   = 10 * time.Minute
	maxConcurrency = 500
)

type config struct {
	store        string
	sessions     int
	duration     time.Duration
	scopeMode    string
	order        lease.Order
	budget       time.Duration
	ttl          time.Duration
	window       time.Duration
	layout       string
	concurrency  int
	startTimeout time.Duration
	sqlPool      int
	cpuPIDs      []int
	baseline     time.Duration
	metricsURL   string
	metricNames  []string
	keep         bool
	runID        string
	part         int
	hold         time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("leasesize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.store, "store", "", "lease store URL (required), as leaseurl.Open takes it: etcd://, postgres://, mysql://, redis://, file://")
	fs.IntVar(&c.sessions, "sessions", 100, fmt.Sprintf("sessions to start, 1 to %d", maxSessions))
	fs.DurationVar(&c.duration, "duration", 60*time.Second, fmt.Sprintf("how long to measure once every session is up, at most %s", maxDuration))
	fs.StringVar(&c.scopeMode, "scope-mode", "own", "own: each session leases from a scope of its own; shared: all lease from one scope (Acquire contention, Lists as long as the fleet)")
	order := fs.String("order", "scope", "the sessions' lease.Order: scope (a List per acquisition, the default) or value")
	fs.DurationVar(&c.budget, "budget", 0, "lease.Options.Budget; 0 is the default (1m)")
	fs.DurationVar(&c.ttl, "ttl", 0, "lease.Options.TTL; 0 is the default (from the budget and window)")
	fs.DurationVar(&c.window, "window", 0, "lease.Options.Window, the renewal interval; 0 is the default (2s)")
	fs.StringVar(&c.layout, "layout", "sonyflake", "layout preset or spec; its node fields are leased, so shared scope needs a pool of at least -sessions values")
	fs.IntVar(&c.concurrency, "start-concurrency", 50, fmt.Sprintf("sessions started (and closed) at once, 1 to %d", maxConcurrency))
	fs.DurationVar(&c.startTimeout, "start-timeout", 5*time.Minute, fmt.Sprintf("give up starting sessions after this long, at most %s", maxStartWait))
	fs.IntVar(&c.sqlPool, "sql-pool", 16, "SQL stores: the most connections the one shared pool opens")
	cpu := fs.String("cpu-pid", "", "comma-separated pids of the engine's server processes; each is measured with its descendants (PostgreSQL: the postmaster)")
	fs.DurationVar(&c.baseline, "baseline", 10*time.Second, fmt.Sprintf("with -cpu-pid or -metrics: measure the engine this long before starting sessions, at most %s", maxBaseline))
	fs.StringVar(&c.metricsURL, "metrics", "", "a Prometheus endpoint of the engine to read counters from, e.g. http://127.0.0.1:2379/metrics")
	names := fs.String("metric-names", etcdCounters, "comma-separated unlabelled counters to read from -metrics")
	fs.BoolVar(&c.keep, "keep", false, "leave the run's marks in the store instead of deleting them")
	fs.StringVar(&c.runID, "run-id", "", "share the run's scopes with other leasesize processes given the same id (letters and digits); empty: an id of this run's own")
	fs.IntVar(&c.part, "part", 0, "with -run-id: this process's number among those sharing the run, so that their sessions' owners differ")
	fs.DurationVar(&c.hold, "hold", 0, fmt.Sprintf("keep the sessions renewing this long after the window before closing them, so that a process sharing the run measures its own window under the whole load; at most %s", maxDuration))
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// Parsed here rather than by the lease package, whose parser's name has changed.
	switch *order {
	case "scope":
		c.order = lease.OrderScope
	case "value":
		c.order = lease.OrderValue
	default:
		return c, fmt.Errorf("-order %q: use scope or value", *order)
	}
	for f := range strings.SplitSeq(*cpu, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return c, fmt.Errorf("-cpu-pid %q: not a pid", f)
		}
		c.cpuPIDs = append(c.cpuPIDs, pid)
	}
	for n := range strings.SplitSeq(*names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			c.metricNames = append(c.metricNames, n)
		}
	}
	switch {
	case c.store == "":
		return c, errors.New("-store is required")
	case c.sessions < 1 || c.sessions > maxSessions:
		return c, fmt.Errorf("-sessions %d: must be from 1 to %d", c.sessions, maxSessions)
	case c.duration < time.Second || c.duration > maxDuration:
		return c, fmt.Errorf("-duration %v: must be from 1s to %v", c.duration, maxDuration)
	case c.scopeMode != "own" && c.scopeMode != "shared":
		return c, fmt.Errorf("-scope-mode %q: use own or shared", c.scopeMode)
	case c.concurrency < 1 || c.concurrency > maxConcurrency:
		return c, fmt.Errorf("-start-concurrency %d: must be from 1 to %d", c.concurrency, maxConcurrency)
	case c.startTimeout <= 0 || c.startTimeout > maxStartWait:
		return c, fmt.Errorf("-start-timeout %v: must be up to %v", c.startTimeout, maxStartWait)
	case c.baseline < 0 || c.baseline > maxBaseline:
		return c, fmt.Errorf("-baseline %v: must be up to %v", c.baseline, maxBaseline)
	case c.sqlPool < 1 || c.sqlPool > 1000:
		return c, fmt.Errorf("-sql-pool %d: must be from 1 to 1000", c.sqlPool)
	case !validRunID(c.runID):
		return c, fmt.Errorf("-run-id %q: use 1 to 32 letters and digits", c.runID)
	case c.part < 0 || c.part > 999:
		return c, fmt.Errorf("-part %d: must be from 0 to 999", c.part)
	case c.part > 0 && c.runID == "":
		return c, errors.New("-part needs -run-id: a part shares the run of the processes given the same id")
	case c.hold < 0 || c.hold > maxDuration:
		return c, fmt.Errorf("-hold %v: must be up to %v", c.hold, maxDuration)
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// member is one simulated node: a generator and the session that feeds it.
type member struct {
	g *snowflake.Generator
	s *lease.Session
}

// engineLoad is what the engine's processes did over a span.
type engineLoad struct {
	busy     float64 // fraction of one core
	backends float64 // PostgreSQL: the run's own backends only; -1 when not measured
	nBackend int
	self     float64 // this process
	metrics  map[string]float64
	span     time.Duration
}

// sampler takes snapshots of the engine, this process and the engine's counters.
type sampler struct {
	cfg   config
	store lease.Store
}

type snapshot struct {
	tree     cpuSample
	backends cpuSample
	self     cpuSample
	metrics  map[string]float64
}

func (s sampler) take(ctx context.Context) snapshot {
	sn := snapshot{tree: sampleTree(s.cfg.cpuPIDs), self: samplePIDs([]int{os.Getpid()})}
	if pids := ownBackends(ctx, s.store); pids != nil {
		sn.backends = samplePIDs(pids)
	}
	if s.cfg.metricsURL != "" {
		sn.metrics, _ = scrape(ctx, s.cfg.metricsURL, s.cfg.metricNames)
	}
	return sn
}

func (s sampler) diff(a, b snapshot) engineLoad {
	e := engineLoad{busy: busy(a.tree, b.tree), self: busy(a.self, b.self), backends: -1, span: b.tree.at.Sub(a.tree.at)}
	if b.backends.cpu != nil {
		// Backends sampled at the end that the start missed started in between:
		// busy counts them whole.
		e.backends, e.nBackend = busy(a.backends, b.backends), len(b.backends.cpu)
	}
	if a.metrics != nil && b.metrics != nil {
		e.metrics = map[string]float64{}
		for k, v := range b.metrics {
			if v0, ok := a.metrics[k]; ok {
				e.metrics[k] = v - v0
			}
		}
	}
	return e
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "leasesize:", err)
		}
		return 2
	}
	if err := measure(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "leasesize:", err)
		return 1
	}
	return 0
}

func measure(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	timing, err := lease.ResolveTiming(cfg.budget, cfg.ttl, cfg.window)
	if err != nil {
		return err
	}
	l, err := layout.Lookup(cfg.layout)
	if err != nil {
		if l, err = layout.Parse(cfg.layout); err != nil {
			return fmt.Errorf("-layout %q: neither a preset nor a spec: %w", cfg.layout, err)
		}
	}
	var poolBits int
	for _, f := range l.NodeFields() {
		poolBits += f.Bits
	}
	pool := int64(1) << poolBits
	if cfg.scopeMode == "shared" && int64(cfg.sessions) > pool {
		return fmt.Errorf("-layout %s leases %d values: fewer than -sessions %d in one shared scope; pick a layout with more node bits", cfg.layout, pool, cfg.sessions)
	}

	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	st, err := leaseurl.Open(octx, cfg.store)
	cancel()
	if err != nil {
		return fmt.Errorf("opening %s: %w", leaseurl.Redact(cfg.store), err)
	}
	defer st.Close()
	engine := engineName(st)
	poolNote := limitPool(st, cfg.sqlPool)

	runID := cfg.runID
	if runID == "" {
		runID = fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	}
	base := "leasesize-" + runID
	// Sessions of the processes sharing a run are told apart by the part's number.
	sessName := func(i int) string {
		if cfg.runID == "" {
			return strconv.Itoa(i)
		}
		return fmt.Sprintf("p%d-%d", cfg.part, i)
	}
	scopeOf := func(i int) string {
		if cfg.scopeMode == "shared" {
			return base
		}
		return base + "-" + sessName(i)
	}

	w := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	w("leasesize: %s store %s, %d sessions, scope %s, order %s, layout %s (pool of %d values per scope)",
		engine, leaseurl.Redact(cfg.store), cfg.sessions, cfg.scopeMode, cfg.order, cfg.layout, pool)
	w("timing: budget %v, ttl %v, window %v: a renewal every %v, %.3f store writes/s per session expected",
		timing.Budget, timing.TTL, timing.Window, timing.Every, timing.StoreWritesPerSecond())
	w("machine: %d CPUs, %s, load average %s; run %s", runtime.NumCPU(), runtime.Version(), loadAvg(), runID)
	if cfg.runID != "" {
		w("part %d of a run shared with other processes", cfg.part)
	}
	if poolNote != "" {
		w("sql pool: %s, shared by every session of this process", poolNote)
	}

	smp := sampler{cfg: cfg, store: st}
	var base0 *engineLoad
	if cfg.baseline > 0 && (len(cfg.cpuPIDs) > 0 || cfg.metricsURL != "") {
		a := smp.take(ctx)
		sleepCtx(ctx, cfg.baseline)
		b := smp.take(ctx)
		e := smp.diff(a, b)
		base0 = &e
	}

	logs := newLogCounter(stderr, 10)
	logger := slog.New(logs)
	startPhase := newPhase(time.Now(), cfg.startTimeout)
	cs := newCountingStore(st, startPhase)
	sessStore := cs.store()

	// Start the sessions, at most cfg.concurrency at once.
	members := make([]member, cfg.sessions)
	var startLat hist
	var startFailed, started atomic.Int64
	var startErrMu sync.Mutex
	startErrs := map[string]int{}
	sctx, scancel := context.WithTimeout(ctx, cfg.startTimeout)
	t0 := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range cfg.concurrency {
		wg.Go(func() {
			for i := range jobs {
				scope := scopeOf(i)
				t := time.Now()
				g, s, err := lease.NewGenerator(sctx,
					snowflake.Options{Layout: l, Namespace: base + "/" + sessName(i)},
					lease.Options{Store: sessStore, Scope: scope, Order: cfg.order, Owner: "leasesize/" + runID + "/" + sessName(i),
						Budget: cfg.budget, TTL: cfg.ttl, Window: cfg.window, Logger: logger})
				startLat.add(time.Since(t))
				if err != nil {
					startFailed.Add(1)
					startErrMu.Lock()
					if msg := err.Error(); startErrs[msg] > 0 || len(startErrs) < maxErrorTexts {
						startErrs[msg]++
					}
					startErrMu.Unlock()
					continue
				}
				members[i] = member{g, s}
				started.Add(1)
			}
		})
	}
	// A start of thousands of sessions can take minutes: say how far it got.
	startDone := make(chan struct{})
	go func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-startDone:
				return
			case <-tick.C:
				fmt.Fprintf(stderr, "leasesize: starting: %d of %d sessions up after %.0f s, %d failed, load %s\n",
					started.Load(), cfg.sessions, time.Since(t0).Seconds(), startFailed.Load(), loadAvg())
			}
		}
	}()
feed:
	for i := range cfg.sessions {
		select {
		case jobs <- i:
		case <-sctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(startDone)
	scancel()
	startDur := time.Since(t0)
	var up int
	for _, m := range members {
		if m.s != nil {
			up++
		}
	}
	w("start: %d of %d sessions up in %.1f s (%d at once): Start p50 %s, p99 %s, max %s; %d failed",
		up, cfg.sessions, startDur.Seconds(), cfg.concurrency,
		ms(startLat.quantile(0.5)), ms(startLat.quantile(0.99)), ms(time.Duration(startLat.max.Load())), startFailed.Load())
	for _, k := range slices.Sorted(maps.Keys(startErrs)) {
		w("  start error (%dx): %s", startErrs[k], k)
	}
	printCalls(w, "start-up store calls", startPhase, startDur, cfg.sessions)
	printErrors(w, "store error while starting", startPhase)

	// The measured window: every session that started, renewing.
	steady := newPhase(time.Now(), cfg.duration+time.Minute)
	cs.next(steady)
	a := smp.take(ctx)
	loadBefore := loadAvg()
	windowCtx, wcancel := context.WithTimeout(ctx, cfg.duration)
	progress := time.NewTicker(15 * time.Second)
	for windowCtx.Err() == nil {
		select {
		case <-windowCtx.Done():
		case <-progress.C:
			fmt.Fprintf(stderr, "leasesize: %.0f s: %d store writes, %d errors, load %s\n",
				time.Since(steady.start).Seconds(), steady.writes(), errorsOf(steady), loadAvg())
		}
	}
	progress.Stop()
	wcancel()
	b := smp.take(ctx)
	closing := newPhase(time.Now(), maxStartWait)
	cs.next(closing)
	window := b.tree.at.Sub(a.tree.at)
	load := smp.diff(a, b)
	loadAfter := loadAvg()
	rss, goroutines := rssMB(), runtime.NumGoroutine()

	// Health at the end of the window: who holds a lease, who can issue.
	var held, issue int
	var losses, failures int64
	for _, m := range members {
		if m.s == nil {
			continue
		}
		st := m.s.Status()
		if st.Held {
			held++
		}
		losses += st.Losses
		failures += st.Failures
		nctx, ncancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if _, err := m.g.Next(nctx); err == nil {
			issue++
		}
		ncancel()
	}
	if cfg.hold > 0 {
		fmt.Fprintf(stderr, "leasesize: holding %d sessions for %v (-hold)\n", up, cfg.hold)
		sleepCtx(ctx, cfg.hold)
	}

	// Close every session (one Release each), then its generator.
	tc := time.Now()
	jobs = make(chan int)
	var closeFailed atomic.Int64
	for range cfg.concurrency {
		wg.Go(func() {
			for i := range jobs {
				m := members[i]
				if m.s == nil {
					continue
				}
				if err := m.s.Close(); err != nil {
					closeFailed.Add(1)
				}
				m.g.Close()
			}
		})
	}
	for i := range members {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	closeDur := time.Since(tc)

	// The report of the window.
	w("window: %.1f s with %d sessions; load average %s before, %s after", window.Seconds(), up, loadBefore, loadAfter)
	printCalls(w, "store calls in the window", steady, window, up)
	writes := float64(steady.writes()) / window.Seconds()
	perNode := writes / float64(max(up, 1))
	w("store writes (acquire, renew, release): %.1f/s in all, %.4f/s per node (expected %.4f); peak %.0f/s over 100 ms",
		writes, perNode, timing.StoreWritesPerSecond(), steady.peak())
	if steady.kinds[kList].lat.n.Load() > 0 {
		w("list: %.0f records per List on average", float64(steady.listed.Load())/float64(steady.kinds[kList].lat.n.Load()))
	}
	cpuLine := func(label string, busy float64, baseline *float64) {
		s := fmt.Sprintf("%s: %.1f%% of one core", label, 100*busy)
		net := busy
		if baseline != nil {
			net = busy - *baseline
			s += fmt.Sprintf("; %.1f%% before the sessions started, so %.1f%% for the run", 100**baseline, 100*net)
		}
		if writes > 0 {
			s += fmt.Sprintf(": %.1f%% of one core per 1000 store writes/s", 100*net/writes*1000)
		}
		w("%s", s)
	}
	if len(cfg.cpuPIDs) > 0 {
		var bl *float64
		if base0 != nil {
			bl = &base0.busy
		}
		cpuLine(fmt.Sprintf("engine CPU (pids %v and descendants, %d processes)", cfg.cpuPIDs, len(b.tree.cpu)), load.busy, bl)
	}
	if load.backends >= 0 {
		cpuLine(fmt.Sprintf("engine CPU of this run's own %d backends", load.nBackend), load.backends, nil)
	}
	w("client CPU (this process, %d sessions): %.1f%% of one core; RSS %.0f MiB, %d goroutines",
		up, 100*load.self, rss, goroutines)
	for _, k := range slices.Sorted(maps.Keys(load.metrics)) {
		d := load.metrics[k]
		s := fmt.Sprintf("engine counter %s: +%.0f, %.1f/s", k, d, d/load.span.Seconds())
		if base0 != nil {
			if d0, ok := base0.metrics[k]; ok {
				s += fmt.Sprintf(" (%.1f/s before the sessions)", d0/base0.span.Seconds())
			}
		}
		if writes > 0 {
			s += fmt.Sprintf(", %.2f per store write", d/load.span.Seconds()/writes)
		}
		w("%s", s)
	}
	w("health at the end: %d of %d sessions hold their lease, %d generators issue; %d losses, %d failed calls counted by the sessions",
		held, up, issue, losses, failures)
	printErrors(w, "store error in the window", steady)
	for _, k := range slices.Sorted(maps.Keys(logs.counts())) {
		w("  session log (%dx): %s", logs.counts()[k], k)
	}
	w("close: %d sessions in %.1f s: Release p50 %s, p99 %s; %d failed",
		up, closeDur.Seconds(), ms(closing.kinds[kRelease].lat.quantile(0.5)), ms(closing.kinds[kRelease].lat.quantile(0.99)), closeFailed.Load())
	// Renewals in flight when Close ends a session fail with its context: not a
	// failure of the store.
	printErrors(w, "store error while closing", closing)
	if cfg.keep {
		w("cleanup: skipped (-keep): the run's scopes start with %s", base)
	} else if what, err := cleanup(context.WithoutCancel(ctx), cfg.store, st, base); err != nil {
		w("cleanup: failed: %v; the run's scopes start with %s", err, base)
	} else {
		w("cleanup: deleted %s", what)
	}
	rn := &steady.kinds[kRenew].lat
	w("summary engine=%s sessions=%d scope=%s window=%v start_s=%.1f writes_per_s=%.1f writes_per_node_s=%.4f renew_p50_ms=%.2f renew_p99_ms=%.2f renew_max_ms=%.1f engine_cpu=%.3f engine_cpu_base=%s errors=%d held=%d/%d",
		engine, cfg.sessions, cfg.scopeMode, timing.Every, startDur.Seconds(), writes, perNode,
		msf(rn.quantile(0.5)), msf(rn.quantile(0.99)), msf(time.Duration(rn.max.Load())),
		load.busy, baseText(base0), errorsOf(steady), held, up)
	return nil
}

// validRunID reports whether id can name a run's scopes in every store: empty, or
// 1 to 32 ASCII letters and digits.
func validRunID(id string) bool {
	if len(id) > 32 {
		return false
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

func baseText(e *engineLoad) string {
	if e == nil {
		return "none"
	}
	return fmt.Sprintf("%.3f", e.busy)
}

func printErrors(w func(string, ...any), label string, p *phase) {
	errs := p.errorTexts()
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		w("  %s (%dx): %s", label, errs[k], k)
	}
}

func errorsOf(p *phase) int64 {
	var n int64
	for k := range nKinds {
		n += p.kinds[k].errs.Load()
	}
	return n
}

// printCalls writes a table of a phase's store calls by kind.
func printCalls(w func(string, ...any), title string, p *phase, span time.Duration, nodes int) {
	w("%s (%.1f s):", title, span.Seconds())
	w("  %-13s %8s %9s %10s %8s %8s %8s %8s %6s", "call", "count", "per s", "per node/s", "p50", "p90", "p99", "max", "errors")
	for k := range nKinds {
		c := &p.kinds[k]
		n := c.lat.n.Load()
		if n == 0 {
			continue
		}
		rate := float64(n) / span.Seconds()
		w("  %-13s %8d %9.1f %10.4f %8s %8s %8s %8s %6d", k, n, rate, rate/float64(max(nodes, 1)),
			ms(c.lat.quantile(0.5)), ms(c.lat.quantile(0.9)), ms(c.lat.quantile(0.99)), ms(time.Duration(c.lat.max.Load())), c.errs.Load())
	}
}

// ms writes a duration in milliseconds with about three significant digits.
func ms(d time.Duration) string {
	f := msf(d)
	switch {
	case f < 10:
		return fmt.Sprintf("%.2fms", f)
	case f < 100:
		return fmt.Sprintf("%.1fms", f)
	}
	return fmt.Sprintf("%.0fms", f)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
