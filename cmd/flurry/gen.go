package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/retry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/snowflake"
	"github.com/spf13/cobra"
)

const (
	genBatch         = 4096     // IDs asked of the generator at a time
	genBufSize       = 64 << 10 // output buffer
	genProgressAbove = 10_000_000
	// genSlowAfter: a run the layout's rate cap makes last at least this long gets
	// progress (on a terminal) or one line saying how long it will take (otherwise),
	// so a slow layout is not mistaken for a hang.
	genSlowAfter = 3 * time.Second
)

func newGenCmd() *cobra.Command {
	var (
		n           uint64 = 1
		layoutText  string
		nodeText    string
		overflow    string
		start       string
		maxDrift    time.Duration
		randomBelow int
		format      string
		lf          leaseFlags
		rf          redisFlags
		sf          segFlags
	)
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Print new IDs, one per line",
		Long: `gen issues N new IDs and prints them in decimal, one per line, as fast as the
reader takes them. IDs of one run strictly increase.

Each process that issues IDs at the same time in one namespace needs its own node
value; two processes with the same layout and node value print the same IDs. Give
it in --node, or take it from a lease store with --lease:

--lease URL leases a node value from a store (see flurry lease --help for the URL
forms; file:///dir is a directory on this machine). The store refuses the value
to any other process while this one holds it, and keeps the value's high-water
mark, so this run starts above every ID any earlier holder issued with it, even on
a machine whose clock is behind. With --lease:
  --node          gives only the node fields that are NOT leased; their values also
                  name the pool, so datacenter=1 and datacenter=2 lease separately.
  --lease-fields  the leased fields, comma-separated (default: every node field
                  not named in --node); a field neither given nor leased is 0.
  --scope         the pool's name (default "default"); gen prints the full scope.
  --fixed N       lease exactly value N (a value from configuration) instead of any
                  free one; --node-from ordinal takes N from this host's StatefulSet
                  ordinal (hostname orders-3 -> 3), --node-from ip from its IP
                  address (with a loud warning: hosts whose addresses share those
                  bits collide). Both still need --lease, for the guard and the mark.
  --ttl, --window the lease's time to live (1s to 24h), and how far ahead each
                  store write reserves time (100ms to 1h).
  --order         scope (default): start above every ID of the scope's ended
                  leases too, so a restart that gets another value still continues
                  above its own earlier IDs; value: above the value's own mark only.

gen prints one line on standard error naming the value it holds and the mark it
starts above. When the lease is lost, or the clock stands behind the mark, gen
pauses (one line on standard error) and goes on when the lease or the clock
recovers, however long that takes; a lease acquired again may hold another value
(IDs stay increasing). On exit, also on Ctrl-C or a closed pipe, it releases the
lease, so the next holder may take the value at once.

--segment URL --tag NAME prints plain integers (1, 2, 3, ...) of a tag of a segment
store instead (Leaf-segment, Flickr tickets; see flurry segment --help): ranges are
taken from the database a step at a time, the next one fetched in the background.
Several processes may serve one tag; no ID is printed twice. Repeat --segment for
several databases: store k of N hands out IDs = k (mod N), and gen moves to the next
one when a database is down, pausing only when none answers and the buffered IDs
are used. On exit it hands the unused rest of its ranges back, so the next run
continues without a gap; after kill -9 that rest is skipped, never reissued.

FLURRY_CLOCK_SKEW=-10s shifts this process's clock, to test clock steps across
processes. It is announced on standard error; never set it in production. With
--redis or --segment the IDs do not follow it (they take Redis's clock, or the
store's counters), and the announcement says so.

A write to a closed pipe ends gen quietly with status 0 (flurry gen -n 1e9 | head).
Ctrl-C stops it after flushing the IDs issued so far, with status 130. On a terminal,
runs of 10,000,000 IDs or more report progress on standard error once a second.`,
		Example: `  flurry gen
  flurry gen -n 1e6 --layout twitter --node datacenter=1,worker=3 > ids.txt
  flurry gen -n 10 --layout sonyflake --node machine=42 --start random
  flurry gen -n 1000000 --overflow borrow --max-drift 50ms --node worker=7
  flurry gen -n 1e6 --lease file:///var/lib/flurry/leases --node datacenter=1
  flurry gen -n 1e6 --lease file:///var/lib/flurry/leases --node-from ordinal
  flurry gen -n 10 --segment file:///tmp/ids --tag order`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			enc, err := flurry.ParseEncoding(format)
			if err != nil {
				return usageErr("--format: %v", err)
			}
			if enc != flurry.Decimal {
				cmd.SetOut(&encodedOut{w: cmd.OutOrStdout(), enc: enc})
			}
			if err := sf.check(cmd); err != nil {
				return err
			} else if len(sf.urls) > 0 {
				return genSegment(cmd.Context(), &sf, n, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			l, err := parseLayoutFlag(layoutText)
			if err != nil {
				return err
			}
			if rf.on(cmd) {
				return genRedis(cmd, l, &rf, n)
			}
			opts := snowflake.Options{Layout: l, MaxDrift: maxDrift, RandomBelow: randomBelow}
			opts.OnLifeLow = lifeLowWarning(cmd.ErrOrStderr(), l)
			if err := opts.Overflow.UnmarshalText([]byte(overflow)); err != nil {
				return usageErr("--overflow: %v", err)
			}
			if opts.Overflow != snowflake.Borrow && cmd.Flags().Changed("max-drift") {
				return usageErr("--max-drift applies only with --overflow borrow")
			}
			if err := opts.Start.UnmarshalText([]byte(start)); err != nil {
				return usageErr("--start: %v", err)
			}
			if cmd.Flags().Changed("random-below") && opts.Start != snowflake.StartRandom {
				return usageErr("--random-below applies only with --start random")
			}
			if maxDrift < 0 || randomBelow < 0 {
				return usageErr("--max-drift and --random-below must not be negative")
			}
			if err := lf.check(cmd); err != nil {
				return err
			}
			var node layout.NodeValues
			if cmd.Flags().Changed("node") {
				if node, nodeText, err = parseNodeFlag(l, "--node", nodeText); err != nil {
					return err
				}
			}
			stderr := cmd.ErrOrStderr()
			if opts.Clock, err = clockFromEnv(stderr, ""); err != nil {
				return err
			}
			if lf.url != "" {
				return genLeased(cmd.Context(), opts, node, nodeText, &lf, n, cmd.OutOrStdout(), stderr)
			}
			if cmd.Flags().Changed("node") {
				opts.Node = node
			} else {
				fmt.Fprintln(stderr, "flurry: warning: "+defaultNodeWarning(l))
			}
			g, err := snowflake.New(opts)
			if err != nil {
				return err
			}
			defer g.Close()
			return generate(cmd.Context(), g, n, cmd.OutOrStdout(), stderr, false, l.Rate())
		},
	}
	f := cmd.Flags()
	f.VarP(countValue{&n}, "count", "n", "how many IDs to print: 1000000, 1_000_000 or 1e6")
	f.Var(newEnum(&format, "decimal", flurry.EncodingNames()...), "format", "how each ID is written: decimal, hex, base62, crockford32 (Crockford's Base32), or bwmarrin/snowflake's base2, base32, base36, base58 or base64 (flurry decode --format reads them back)")
	f.StringVar(&layoutText, "layout", "twitter", "preset name or layout text form (see flurry layouts)")
	f.StringVar(&nodeText, "node", "", "node values, e.g. datacenter=1,worker=3 (fields left out are 0), or a plain number for a layout with one node field; with --lease, only the fields not leased")
	f.Var(newEnum(&overflow, "wait", "wait", "borrow"), "overflow", "when a tick's sequence is used up: wait for the next tick, or borrow future ticks")
	f.DurationVar(&maxDrift, "max-drift", 0, "with --overflow borrow: how far ahead of the clock IDs may run (default 1s)")
	f.Var(newEnum(&start, "zero", "zero", "random", "continue"), "start", "where each tick's sequence starts")
	f.IntVar(&randomBelow, "random-below", 0, "with --start random: the start is below this (default 100)")
	lf.register(cmd)
	rf.register(cmd)
	sf.register(cmd)
	return cmd
}

// lifeLowWarning is the generator's OnLifeLow for gen: a year before the layout's
// time field runs out (snowflake.Options.WarnBefore), one line on stderr.
func lifeLowWarning(stderr io.Writer, l *layout.Layout) func(time.Duration, time.Time) {
	name := l.Name()
	if name == "" {
		name = l.String()
	}
	return func(left time.Duration, end time.Time) {
		fmt.Fprintf(stderr, "flurry: warning: layout %s runs out on %s (%s left), when it stops issuing: move to a layout with a later epoch before then\n",
			name, end.UTC().Format("2006-01-02"), layout.FormatLeft(left))
	}
}

// defaultNodeWarning explains what running without --node means for layout l.
func defaultNodeWarning(l *layout.Layout) string {
	nodes := l.NodeFields()
	if len(nodes) == 0 {
		return "this layout has no node field, so two processes issuing IDs at the same time print the same IDs; run only one"
	}
	example := make([]string, len(nodes))
	for i, f := range nodes {
		example[i] = f.Name + "=" + strconv.Itoa(i+1)
	}
	return fmt.Sprintf("no --node given, so node value 0 is used (%s); two processes with the same node value print duplicate IDs: give each its own, e.g. --node %s",
		l.FormatNodeValues(layout.NodeValues{}), strings.Join(example, ","))
}

// generate writes n IDs from g to stdout, one per line. A closed pipe ends it
// quietly; a cancelled ctx ends it with exit code 130 after flushing. With pause,
// a lost lease (lease.ErrLost) or a clock behind the mark
// (snowflake.ErrClockBehind) does not end it: it flushes, reports the pause as one
// line on stderr, and tries again until the generator issues or ctx ends; and IDs
// not above the last one printed (after a move to another node value) are skipped.
//
// capRate is the most IDs per second the source can issue (the layout's cap), or 0
// when unknown. A run that the cap makes take genSlowAfter or longer shows progress
// with the time left on a terminal, and otherwise one line with the least time it
// will take.
// encodedOut is gen's standard output when --format asks for an encoding other
// than decimal: every way of gen (snowflake, lease, Redis, segment) writes
// through generate, which finds the encoding here.
type encodedOut struct {
	w   io.Writer
	enc flurry.Encoding
}

func (e *encodedOut) Write(p []byte) (int, error) { return e.w.Write(p) }

func generate(ctx context.Context, g flurry.Source, n uint64, stdout, stderr io.Writer, pause bool, capRate float64) error {
	enc := flurry.Decimal
	if eo, ok := stdout.(*encodedOut); ok {
		enc, stdout = eo.enc, eo.w
	}
	w := bufio.NewWriterSize(stdout, genBufSize)
	ids := make([]flurry.ID, min(n, genBatch))
	buf := make([]byte, 0, genBufSize)
	least := leastDuration(n, capRate)
	slow := least >= genSlowAfter
	terminal := isTerminal(stderr)
	if slow && !terminal {
		fmt.Fprintf(stderr, "flurry: gen: %s IDs at the layout's cap of %s IDs/s take about %s\n", group(n), group(uint64(capRate)), least)
	}
	pr := newProgress(stderr, n, terminal && (n >= genProgressAbove || slow))
	pr.capRate = capRate
	defer pr.finish()
	var (
		done   uint64
		last   flurry.ID
		paused bool
	)
	for done < n {
		k := min(n-done, uint64(len(ids)))
		got, genErr := 0, ctx.Err() // the generator sees ctx only when it sleeps
		if genErr == nil {
			got, genErr = g.NextN(ctx, ids[:k])
		}
		buf = buf[:0]
		printed := 0
		for _, id := range ids[:got] {
			if pause && done+uint64(printed) > 0 && id <= last {
				// After a lost lease the session may lease another node value; its
				// IDs of the current tick can sort below the old value's. Skip them,
				// so the output still strictly increases.
				continue
			}
			last = id
			if enc == flurry.Decimal {
				buf = strconv.AppendInt(buf, int64(id), 10)
			} else {
				buf = enc.AppendID(buf, id)
			}
			buf = append(buf, '\n')
			printed++
		}
		if _, err := w.Write(buf); err != nil {
			return quietPipe(fmt.Errorf("gen: write: %w", err))
		}
		done += uint64(printed)
		if printed > 0 {
			paused = false
		}
		if genErr != nil {
			if err := w.Flush(); err != nil {
				return quietPipe(fmt.Errorf("gen: write: %w", err))
			}
			if ctx.Err() != nil {
				pr.finish()
				return &exitError{code: 130, err: fmt.Errorf("gen: interrupted after %d of %d IDs", done, n)}
			}
			if d, ok := pauseFor(genErr); pause && ok {
				if !paused {
					pr.finish()
					fmt.Fprintf(stderr, "flurry: gen: paused: %s; waiting\n", oneLine(genErr))
					paused = true
				}
				if retry.Sleep(ctx, d) == nil {
					continue
				}
				return &exitError{code: 130, err: fmt.Errorf("gen: interrupted after %d of %d IDs", done, n)}
			}
			return fmt.Errorf("gen: after %d of %d IDs: %w", done, n, genErr)
		}
		pr.update(done)
	}
	if err := w.Flush(); err != nil {
		return quietPipe(fmt.Errorf("gen: write: %w", err))
	}
	return nil
}

// pauseFor reports whether err is one gen recovers from by waiting (a lost lease, a
// clock behind the mark or behind Redis's last tick, a segment store outage), and how
// long to wait before trying again.
func pauseFor(err error) (time.Duration, bool) {
	const poll = 100 * time.Millisecond
	if cb, ok := errors.AsType[*snowflake.ClockBehindError](err); ok {
		return min(max(cb.Gap, 10*time.Millisecond), time.Second), true
	}
	if errors.Is(err, snowflake.ErrClockBehind) || errors.Is(err, lease.ErrLost) ||
		errors.Is(err, segment.ErrUnavailable) || redisClockBehind(err) {
		return poll, true
	}
	return 0, false
}

// leastDuration is how long n IDs take at capRate IDs per second, rounded up to a
// second; 0 when the rate is unknown.
func leastDuration(n uint64, capRate float64) time.Duration {
	if capRate <= 0 || n == 0 {
		return 0
	}
	secs := float64(n) / capRate
	if secs > float64(math.MaxInt64/int64(time.Second)) {
		return time.Duration(math.MaxInt64).Truncate(time.Second)
	}
	return time.Duration(math.Ceil(secs)) * time.Second
}

// progress reports a count, rate and time left on one terminal line about once a
// second.
type progress struct {
	w       io.Writer
	capRate float64 // the layout's cap in IDs/s, 0 if unknown
	total   uint64
	on      bool
	shown   bool
	started time.Time
	next    time.Time
}

func newProgress(w io.Writer, total uint64, on bool) *progress {
	now := time.Now()
	return &progress{w: w, total: total, on: on, started: now, next: now.Add(time.Second)}
}

func (p *progress) update(done uint64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(time.Second)
	rate := float64(done) / now.Sub(p.started).Seconds()
	// Time left at the rate so far, but never less than the cap allows.
	left := leastDuration(p.total-done, p.capRate)
	if rate > 0 {
		left = max(left, time.Duration(float64(p.total-done)/rate*float64(time.Second)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "\rflurry: gen: %s of %s IDs (%.0f%%), %s IDs/s, %s left\x1b[K",
		group(done), group(p.total), 100*float64(done)/float64(p.total), group(uint64(rate)), left)
	p.shown = true
}

// finish ends the progress line so that the shell prompt starts on a new line.
func (p *progress) finish() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// noArgs refuses positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments, got %q", cmd.Name(), args[0])
	}
	return nil
}
