package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/snowflake"
	"github.com/spf13/cobra"
)

// Defaults of gen's lease flags: the lease package's own defaults.
const (
	defaultLeaseTTL    = 10 * time.Second
	defaultLeaseWindow = 2 * time.Second
)

// leaseFlags are gen's flags for taking the node value from a lease store.
type leaseFlags struct {
	url      string
	scope    string
	fields   string
	fixed    int64
	nodeFrom string
	ttl      time.Duration
	budget   time.Duration
	window   time.Duration
	order    string

	fieldsGiven bool
	fixedGiven  bool
}

func (lf *leaseFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&lf.url, "lease", "", "lease the node value from this store, e.g. file:///var/lib/flurry/leases (see flurry lease --help)")
	f.StringVar(&lf.scope, "scope", "default", "with --lease: the name of the pool of node values")
	f.StringVar(&lf.fields, "lease-fields", "", "with --lease: the leased node fields, comma-separated (default: every node field not named in --node)")
	f.Int64Var(&lf.fixed, "fixed", 0, "with --lease: lease exactly this value of the leased fields (a value from configuration)")
	f.Var(newEnum(&lf.nodeFrom, "", "ordinal", "ip"), "node-from", "with --lease: lease the value this host's StatefulSet ordinal (hostname orders-3 -> 3) or IP address gives")
	f.DurationVar(&lf.budget, "budget", 0, "with --lease: the outage budget, how long IDs keep coming while the store does not answer (default: what --ttl allows; with --budget and no --ttl, the TTL is derived from it)")
	f.DurationVar(&lf.ttl, "ttl", defaultLeaseTTL, "with --lease: the lease's time to live in the store; a crashed holder's value is free again after it")
	f.DurationVar(&lf.window, "window", defaultLeaseWindow, "with --lease: the renewal interval, one store write per window")
	f.Var(newEnum(&lf.order, "scope", "scope", "value"), "order", "with --lease: start above every ended lease of the scope (scope), or above the leased value's own mark only (value)")
}

// check validates the lease flags against each other; cmd's flags are parsed.
func (lf *leaseFlags) check(cmd *cobra.Command) error {
	changed := cmd.Flags().Changed
	lf.fieldsGiven, lf.fixedGiven = changed("lease-fields"), changed("fixed")
	if lf.url == "" {
		if changed("lease") {
			return usageErr("--lease needs a store URL such as file:///var/lib/flurry/leases")
		}
		for _, name := range []string{"fixed", "node-from"} {
			if changed(name) {
				return usageErr("--%s needs --lease URL: the lease refuses the value to a second process and keeps its high-water mark, so no run reissues an ID; on one machine use --lease file:///var/lib/flurry/leases (or give the value in --node, without those guards)", name)
			}
		}
		for _, name := range []string{"lease-fields", "scope", "ttl", "window", "order", "budget"} {
			if changed(name) {
				return usageErr("--%s applies only with --lease URL", name)
			}
		}
		return nil
	}
	if changed("budget") && !changed("ttl") {
		lf.ttl = 0 // derived from the budget
	}
	if lf.fixedGiven && lf.nodeFrom != "" {
		return usageErr("give --fixed or --node-from, not both")
	}
	if lf.fixedGiven && lf.fixed < 0 {
		return usageErr("--fixed %d is negative", lf.fixed)
	}
	// Each flag alone first, the others at their defaults, so that the message names
	// the flag at fault; zero is the default (for --ttl: derived from the budget).
	for _, f := range []struct {
		name                string
		budget, ttl, window time.Duration
	}{{"ttl", 0, lf.ttl, 0}, {"window", 0, 0, lf.window}, {"budget", lf.budget, 0, 0}} {
		if _, err := lease.ResolveTiming(f.budget, f.ttl, f.window); err != nil {
			return usageErr("--%s: %v", f.name, strings.TrimPrefix(err.Error(), "lease: "))
		}
	}
	if _, err := lease.ResolveTiming(lf.budget, lf.ttl, lf.window); err != nil {
		return usageErr("--budget: %v", strings.TrimPrefix(err.Error(), "lease: "))
	}
	return nil
}

// leased returns the node fields to lease, in layout order: those of --lease-fields,
// or else every node field that nodeText (the --node flag) does not name.
func (lf *leaseFlags) leased(l *layout.Layout, nodeText string) ([]string, error) {
	fields := l.NodeFields()
	if len(fields) == 0 {
		return nil, fmt.Errorf("layout %s has no node field to lease; run it without --lease, and only one process at a time", l)
	}
	given := map[string]bool{}
	for _, pair := range strings.Split(nodeText, ",") {
		if name, _, ok := strings.Cut(pair, "="); ok {
			given[strings.TrimSpace(name)] = true
		}
	}
	var all []string
	for _, f := range fields {
		all = append(all, f.Name)
	}
	want := map[string]bool{}
	if lf.fieldsGiven {
		for _, name := range strings.Split(lf.fields, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				return nil, usageErr("--lease-fields %q: name the leased node fields, e.g. worker", lf.fields)
			case !contains(all, name):
				return nil, usageErr("--lease-fields: the layout has no node field %q; its node fields are %s", name, strings.Join(all, ", "))
			case given[name]:
				return nil, usageErr("--lease-fields: %s is also given in --node; a node field is either leased or given", name)
			case want[name]:
				return nil, usageErr("--lease-fields: %s is named twice", name)
			}
			want[name] = true
		}
	}
	var out []string
	for _, name := range all {
		if lf.fieldsGiven && want[name] || !lf.fieldsGiven && !given[name] {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, usageErr("--node gives every node field (%s), so none is left to lease: leave out the fields to lease, or run without --lease", strings.Join(all, ", "))
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// fixedValue returns the value --fixed or --node-from asks for, or nil for any free
// value of the pool. bits is the width of the leased fields.
func (lf *leaseFlags) fixedValue(bits int, log *slog.Logger) (*int64, error) {
	var v int64
	switch {
	case lf.fixedGiven:
		v = lf.fixed
	case lf.nodeFrom == "ordinal":
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--node-from ordinal: %w", err)
		}
		if v, err = lease.Ordinal(host); err != nil {
			return nil, fmt.Errorf("--node-from ordinal: %w", err)
		}
	case lf.nodeFrom == "ip":
		ip, err := lease.LocalIP()
		if err != nil {
			return nil, fmt.Errorf("--node-from ip: %w", err)
		}
		if v, err = lease.FromIP(ip, bits, log); err != nil {
			return nil, fmt.Errorf("--node-from ip: %w", err)
		}
	default:
		return nil, nil
	}
	return &v, nil
}

// genLeased runs gen with a node value leased from the store lf names: it starts a
// lease session, reports what it holds, issues n IDs (pausing while the lease is lost
// or the clock is behind the mark), and releases the lease on the way out.
func genLeased(ctx context.Context, opts snowflake.Options, node layout.NodeValues, nodeText string, lf *leaseFlags, n uint64, stdout, stderr io.Writer) error {
	l := opts.Layout
	leased, err := lf.leased(l, nodeText)
	if err != nil {
		return err
	}
	bits := 0
	for _, f := range l.NodeFields() {
		if contains(leased, f.Name) {
			bits += f.Bits
		}
	}
	lines := newLineHandler(stderr)
	log := slog.New(lines)
	fixed, err := lf.fixedValue(bits, log)
	if err != nil {
		return err
	}
	store, err := leaseurl.Open(ctx, lf.url)
	if err != nil {
		return err
	}
	defer store.Close()
	var order lease.Order
	err = order.UnmarshalText([]byte(lf.order))
	if err != nil {
		return usageErr("--order: %v", err)
	}
	g, s, err := lease.NewGenerator(ctx, opts, lease.Options{
		Store: store, Scope: lf.scope, Leased: leased, Node: node, Fixed: fixed,
		Budget: lf.budget, TTL: lf.ttl, Window: lf.window, Order: order, Logger: log,
	})
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: 130, err: fmt.Errorf("gen: interrupted before a node value was leased: %w", err)}
		}
		return err
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(stderr, "flurry: warning: gen: %s; the value stays held until its lease expires\n", oneLine(err))
		}
		g.Close()
	}()
	fmt.Fprintln(stderr, "flurry: gen: "+describeSession(s.Status(), time.Unix(0, opts.Clock.Now())))
	lines.showInfo() // later acquisitions (after a lost lease) are worth a line
	return generate(ctx, g, n, stdout, stderr, true, opts.Layout.Rate())
}

// describeSession says which value a session holds and the mark it starts above.
func describeSession(st lease.Status, now time.Time) string {
	s := fmt.Sprintf("leased node value %d (%s) in scope %s as %s; ", st.Value, st.NodeText, st.Scope, st.Owner)
	if st.Above.UnixMilli() <= 0 {
		return s + "the value has no mark (never used)"
	}
	return s + fmt.Sprintf("issuing above its mark %s (%s)", formatMs(st.Above), age(now.Sub(st.Above)))
}

// formatMs writes t in RFC 3339, UTC, with milliseconds.
func formatMs(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// age writes how long ago (d > 0) or how far ahead (d < 0) an instant is.
func age(d time.Duration) string {
	ahead := d < 0
	if ahead {
		d = -d
	}
	switch {
	case d < time.Minute:
		d = d.Round(100 * time.Millisecond)
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	if ahead {
		return "in " + d.String()
	}
	return d.String() + " ago"
}

// clockFromEnv returns the system clock, shifted by FLURRY_CLOCK_SKEW when set, and
// announces a shift on stderr. unmoved, when not empty, is a second line saying
// what the shift does not move (gen --redis takes Redis's clock), so that a test
// of clock steps does not mistake a run it cannot skew for one that survived.
func clockFromEnv(stderr io.Writer, unmoved string) (clock.Clock, error) {
	clk, skew, err := skewedClock(os.Getenv(skewEnv))
	if err != nil {
		return nil, err
	}
	if skew != 0 {
		fmt.Fprintf(stderr, "flurry: WARNING: %s=%s: this process's clock is shifted by %v FOR TESTING; never set it in production\n",
			skewEnv, os.Getenv(skewEnv), skew)
		if unmoved != "" {
			fmt.Fprintf(stderr, "flurry: %s\n", unmoved)
		}
	}
	return clk, nil
}

// lineHandler is a slog.Handler that writes records as "flurry: " lines on stderr,
// for the lease session's messages: warnings and errors always, information only
// after showInfo. A warning or error repeated without anything between is written
// once, so a session that retries every second does not flood the terminal.
type lineHandler struct {
	out   *lineOut
	attrs []slog.Attr
}

type lineOut struct {
	mu   sync.Mutex
	w    io.Writer
	info bool
	last string
}

func newLineHandler(w io.Writer) *lineHandler { return &lineHandler{out: &lineOut{w: w}} }

func (h *lineHandler) showInfo() {
	h.out.mu.Lock()
	h.out.info = true
	h.out.mu.Unlock()
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.Level < slog.LevelWarn {
		o.last = ""
		if !o.info || r.Level < slog.LevelInfo {
			return nil
		}
	} else if r.Message == o.last {
		return nil
	} else {
		o.last = r.Message
	}
	var b strings.Builder
	b.WriteString("flurry: ")
	if r.Level >= slog.LevelWarn && r.Level < slog.LevelError {
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	var parts []string
	add := func(a slog.Attr) bool {
		if !a.Equal(slog.Attr{}) {
			parts = append(parts, a.Key+"="+attrText(a.Value))
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, " ") + ")")
	}
	b.WriteByte('\n')
	_, err := io.WriteString(o.w, strings.ReplaceAll(b.String()[:b.Len()-1], "\n", "; ")+"\n")
	return err
}

func attrText(v slog.Value) string {
	v = v.Resolve()
	var s string
	switch v.Kind() {
	case slog.KindTime:
		s = formatMs(v.Time())
	default:
		s = v.String()
	}
	if s == "" || strings.ContainsAny(s, " \t\"") {
		return strconv.Quote(s)
	}
	return s
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineHandler{out: h.out, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup is not needed by the lease package; groups are flattened.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }
