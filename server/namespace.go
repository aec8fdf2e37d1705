package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/internal/hostid"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	segfile "github.com/flurryid/flurry/segment/filestore"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/server/internal/strategy"
	"github.com/flurryid/flurry/snowflake"
)

// textSource issues IDs whose form is text (uuidv7, objectid): appendNext appends
// n IDs to dst, each followed by sep (and in double quotes with quote), and
// decodeID splits one apart.
type textSource interface {
	appendNext(ctx context.Context, dst []byte, n int, sep byte, quote bool) ([]byte, error)
	decodeID(id string) (*flurryv1.DecodeResponse, error)
}

// namespace is one configured namespace and everything it holds.
type namespace struct {
	name     string
	strategy string
	ints     flurry.Source // integer strategies: a snowflake generator, a segment allocator, a Redis generator
	text     textSource    // text strategies
	layout   *layout.Layout
	tokens   *tokenSet // set by New; empty: open to everyone
	maxCount int       // the most IDs one request may ask for
	piece    int       // IDs issued and formatted at a time in a large batch
	issued   atomic.Int64
	lastLog  atomic.Int64 // unix ns of the last logged issue error (logIssue)
	metrics  nsMetrics

	// snowflake
	gen        *snowflake.Generator
	sess       *lease.Session
	leaseStore lease.Store
	leaseURL   string
	leased     []string // the layout's node fields the lease fills
	fixedValue bool     // the leased value is configured (lease.fixed)
	// behindSlack is how far the clock may stand behind the lease's mark while the
	// generator still issues at once: MaxDrift under the Logical policy, the wait
	// threshold under the others.
	behindSlack time.Duration
	// segment
	alloc     *segment.Allocator
	segStores []segment.Store
	// segResidues and segModulus are the stores' residue classes, for info.
	segResidues []int64
	segModulus  int64
	segURLs     []string
	// a strategy registered from outside the server (the redis strategy:
	// server/redisstrategy), and what its errors mean
	ext      strategy.Source
	extClass func(error) strategy.Class

	// what the lease and segment stores report of their data
	ids identities

	// closers run in reverse order on close, after the sources above.
	closers []func(ctx context.Context) error
}

// nextN fills dst with IDs of an integer namespace: all of it, or an error.
func (ns *namespace) nextN(ctx context.Context, dst []flurry.ID) error {
	for len(dst) > 0 {
		n, err := ns.ints.NextN(ctx, dst)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the generator returned no ID")
		}
		dst = dst[n:]
	}
	return nil
}

// ready reports whether the namespace can issue now, and why not. The reason is
// shown to callers, so it names no store, address or user; the stores' own
// errors are in the log (logged by the lease session, the allocator, or here).
func (s *Server) ready(ctx context.Context, ns *namespace) (bool, string) {
	switch {
	case ns.sess != nil:
		st := ns.sess.Status()
		// The session's Until and Above are on the generators' clock, which a
		// FLURRY_CLOCK_SKEW offset (or a clock anchored before a wall step) moves
		// away from time.Now: judge them on that clock, as the generator does.
		now := time.Unix(0, s.opts.Clock.Now())
		switch {
		case !st.Held:
			return false, "no lease held on a node value (the lease store's error is in the server's log)"
		case !now.Before(st.Until):
			return false, "the lease's grant ran out unrenewed (the lease store's error is in the server's log)"
		case now.Add(ns.behindSlack).Before(st.Above):
			return false, fmt.Sprintf("the clock is %v behind the node value's high-water mark", st.Above.Sub(now).Round(time.Millisecond))
		}
		return true, ""
	case ns.alloc != nil:
		st := ns.alloc.Stats()
		if st.Buffered <= 0 && st.Err != nil {
			return false, "no IDs buffered and no segment store answers (their errors are in the server's log)"
		}
		return true, ""
	case ns.ext != nil:
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := ns.ext.Node(cctx); err != nil {
			s.logIssue(ns, err)
			return false, "Redis does not answer (its error is in the server's log)"
		}
		return true, ""
	}
	return true, ""
}

// close stops the namespace: ranges handed back, lease released, stores closed.
func (ns *namespace) close(ctx context.Context) error {
	var errs []error
	if ns.alloc != nil {
		if err := ns.alloc.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: handing segment ranges back: %w", ns.name, err))
		}
	}
	if ns.sess != nil {
		if err := ns.sess.Close(); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: releasing the lease: %w (the value stays held until its lease expires)", ns.name, err))
		}
	}
	if ns.gen != nil {
		ns.gen.Close()
	}
	if ns.ext != nil {
		ns.ext.Close()
	}
	for i := len(ns.closers) - 1; i >= 0; i-- {
		if err := ns.closers[i](ctx); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns.name, err))
		}
	}
	return errors.Join(errs...)
}

// builder makes namespaces from configuration.
type builder struct {
	opts    *Options
	dataDir string
	clock   clock.Clock
	region  *config.Region // fills its field in every snowflake namespace; nil outside a region
}

func (b *builder) build(ctx context.Context, name string, c *config.Namespace) (*namespace, error) {
	ns := &namespace{name: name, strategy: c.Strategy}
	var err error
	switch c.Strategy {
	case "snowflake":
		err = b.snowflake(ctx, ns, c.Snowflake)
	case "segment":
		err = b.segment(ctx, ns, c.Segment)
	default:
		if src, ok := b.opts.textStrategies()[c.Strategy]; ok {
			ns.text, err = src(ctx)
		} else {
			err = b.registered(ctx, ns, c)
		}
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		ns.close(cctx)
		return nil, fmt.Errorf("namespace %s (%s): %w", name, c.Strategy, err)
	}
	return ns, nil
}

// Probe looks, for `flurry serve --check`, at what each namespace of a strategy
// with a probe relies on outside the configuration (for redis: the Redis
// server's settings that uniqueness needs) and returns the lines to print, in
// namespace order. The error names the namespaces that would refuse to start.
func Probe(ctx context.Context, cfg *config.Config, log *slog.Logger) ([]string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lines []string
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.Namespaces)) {
		c := cfg.Namespaces[name]
		st, ok := strategy.Lookup(c.Strategy)
		if !ok || st.Probe == nil {
			continue
		}
		l, err := st.Probe(ctx, strategy.Namespace{Name: name, Config: c, Logger: log})
		for _, s := range l {
			lines = append(lines, "namespace "+name+": "+s)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("namespace %s (%s): %w", name, c.Strategy, err))
		}
	}
	return lines, errors.Join(errs...)
}

// registered builds a namespace of a strategy that a package outside the server
// registers when the program imports it: the redis strategy
// (server/redisstrategy), which links go-redis. A strategy flurry knows but the
// program lacks is refused with what to do (in the flurry command, the build tag).
func (b *builder) registered(ctx context.Context, ns *namespace, c *config.Namespace) error {
	st, ok := strategy.Lookup(c.Strategy)
	if !ok {
		if err := engines.Check(engines.Strategy, c.Strategy); err != nil {
			return err
		}
		return fmt.Errorf("strategy %s is not built into this flurry yet; use snowflake, segment or redis", c.Strategy)
	}
	src, err := st.Open(ctx, strategy.Namespace{Name: ns.name, Config: c, Logger: b.opts.Logger})
	if err != nil {
		return err
	}
	ns.ext, ns.extClass, ns.ints, ns.layout = src, st.Classify, src, src.Layout()
	return nil
}

func parseLayout(text string) (*layout.Layout, error) {
	if text == "" {
		text = config.DefaultLayout
	}
	return layout.Parse(text)
}

func (b *builder) snowflake(ctx context.Context, ns *namespace, c *config.Snowflake) error {
	l, err := parseLayout(c.Layout)
	if err != nil {
		return err
	}
	ns.layout = l
	var node layout.NodeValues
	given := map[string]bool{}
	nodeText := c.Node
	if r := b.region; r != nil {
		// The region value is a fixed node field of every snowflake namespace
		// (the configuration check refuses a namespace that gives it too).
		if nodeText != "" {
			nodeText += ","
		}
		nodeText += fmt.Sprintf("%s=%d", r.FieldName(), *r.Value)
	}
	if nodeText != "" {
		if node, err = l.ParseNodeValues(nodeText); err != nil {
			return err
		}
		for _, pair := range strings.Split(nodeText, ",") {
			if k, _, ok := strings.Cut(pair, "="); ok {
				given[strings.TrimSpace(k)] = true
			}
		}
	}
	leased := c.Lease.Fields
	if len(leased) == 0 {
		for _, f := range l.NodeFields() {
			if !given[f.Name] {
				leased = append(leased, f.Name)
			}
		}
	}
	if len(leased) == 0 {
		return fmt.Errorf("node %q gives every node field, so none is left to lease: leave out the fields to lease", c.Node)
	}
	log := b.opts.Logger.With("namespace", ns.name)
	gopts := snowflake.Options{Layout: l, Namespace: ns.name, Clock: b.clock,
		OnLifeLow: func(left time.Duration, end time.Time) {
			log.Warn("the layout's time field runs out soon: move to a layout with a later epoch before then",
				"left", layout.FormatLeft(left), "end", end)
		}}
	if err := gopts.Overflow.UnmarshalText([]byte(c.Overflow)); err != nil {
		return err
	}
	// A leased node continues above the IDs of the value's earlier holders, of
	// its scope's ended leases and of its own crashed run. A clock behind them
	// (a restart after a crash, whose journal's mark leads the clock by a few
	// seconds, or a clock that stepped back) issues above them at once under
	// Logical, within MaxDrift; Fail would refuse for the whole gap.
	gopts.Behind = snowflake.Logical
	if c.Behind != "" {
		if err := gopts.Behind.UnmarshalText([]byte(c.Behind)); err != nil {
			return err
		}
	}
	if err := gopts.Start.UnmarshalText([]byte(c.StartPolicy())); err != nil {
		return err
	}
	if gopts.Start == snowflake.StartRandom {
		gopts.RandomBelow = c.RandomBelow
	}
	gopts.MaxDrift = c.MaxDrift.Or(0)
	if gopts.MaxDrift == 0 && (gopts.Behind == snowflake.Logical || gopts.Overflow == snowflake.Borrow) {
		gopts.MaxDrift = config.DefaultMaxDrift
	}
	gopts.WaitThreshold = c.WaitThreshold.Or(0)
	// Readiness follows what Next does with a clock behind the mark: under
	// Logical it issues above the mark within MaxDrift, so a restart whose clock
	// trails its journal by seconds is ready, not pulled out of rotation.
	if gopts.Behind == snowflake.Logical {
		ns.behindSlack = gopts.MaxDrift
	} else if gopts.WaitThreshold > 0 {
		ns.behindSlack = gopts.WaitThreshold
	} else if gopts.WaitThreshold == 0 {
		ns.behindSlack = 10 * time.Millisecond
	}

	url := c.Lease.Store
	// The embedded default prefers a node value derived from the machine: two
	// servers left on it on two machines then rarely take the same one (they
	// still can; clients given both refuse to mix them, see identities).
	var prefer *uint64
	if url == "" {
		m := storeid.Machine()
		prefer = &m
		dir := filepath.Join(b.dataDir, "leases")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the lease directory: %w; check --data", err)
		}
		url = "file://" + dir
	}
	ns.leaseURL = lease.RedactURL(url)
	store, err := b.opts.openLease(ctx, url)
	if err != nil {
		return fmt.Errorf("opening lease store %s: %w", ns.leaseURL, err)
	}
	ns.closers = append(ns.closers, func(context.Context) error { return store.Close() })
	if l, ok := store.(interface{ SetListening(net.Addr) }); ok && b.opts.Listening != nil {
		l.SetListening(b.opts.Listening)
	}
	ns.leaseStore = store
	ns.ids.setLease(store)
	scope := c.Lease.Scope
	if scope == "" {
		scope = ns.name
	}
	var order lease.Order
	if err := order.UnmarshalText([]byte(c.Lease.Order)); err != nil {
		return err
	}
	// The journal lets the next process on this data directory resume the lease
	// after a crash, and start above this one's IDs (lease.Journal).
	journal, err := lease.OpenJournal(filepath.Join(b.dataDir, "journal", ns.name+".json"))
	if err != nil {
		return fmt.Errorf("%w; check --data", err)
	}
	ns.closers = append(ns.closers, func(context.Context) error { return journal.Close() })
	if c.Lease.Store == "" && c.Lease.Fixed != nil {
		if err := copiedPrivate(ctx, journal, *c.Lease.Fixed); err != nil {
			return err
		}
	}
	g, s, err := lease.NewGenerator(ctx, gopts, lease.Options{
		Store: store, Scope: scope, Leased: leased, Node: node, Fixed: c.Lease.Fixed,
		Budget: c.Lease.Budget.Or(0), TTL: c.Lease.TTL.Or(0), Window: c.Lease.Window.Or(0),
		Order: order, Journal: journal, Logger: log, Prefer: prefer,
	})
	if err != nil {
		return fmt.Errorf("leasing a node value from %s: %w", ns.leaseURL, err)
	}
	ns.gen, ns.sess, ns.ints = g, s, g
	ns.leased, ns.fixedValue = leased, c.Lease.Fixed != nil
	return nil
}

// copiedPrivate refuses a fixed node value leased from the embedded file store
// when the data directory is a copy: its journal was saved in another file (cp -a,
// a restored backup, a volume snapshot given to another server). Each copy of a
// data directory has its own copy of the store, so no lease can keep the copy and
// its original, if it runs, from issuing the same IDs under the one value. A
// journal saved before a reboot is not a copy here (the inode is kept); a journal
// from an older flurry, without an origin, is not refused either.
func copiedPrivate(ctx context.Context, j *lease.FileJournal, value int64) error {
	e, err := j.Load(ctx)
	if err != nil || e.Origin == "" || hostid.SameFile(e.Origin, j.Path()) {
		return nil // the session reports a journal it cannot read
	}
	return fmt.Errorf("this data directory is a copy (its lease journal %s was saved in another file: copied, restored from a backup or from a snapshot), "+
		"and the fixed node value %d is leased from the embedded file store inside it: each copy has its own store, so nothing can keep this server and the one it was copied from "+
		"from issuing the same IDs. Give each server a data directory of its own that flurry created, and its own fixed value, or lease from a store the servers share (lease.store); "+
		"if this directory replaces its original for good (that server will not run again), delete %s to start on it", j.Path(), value, j.Path())
}

func (b *builder) segment(ctx context.Context, ns *namespace, c *config.Segment) error {
	urls := c.Stores
	embedded := false // the file store in the data directory
	if len(urls) == 0 {
		u, err := b.defaultSegmentURL(ns.name)
		if err != nil {
			return err
		}
		urls, embedded = []string{u}, strings.HasPrefix(u, "file://")
	}
	tag := c.Tag
	if tag == "" {
		tag = ns.name
	}
	for _, u := range urls {
		ns.segURLs = append(ns.segURLs, lease.RedactURL(u))
	}
	var prepare func(ctx context.Context, st segment.Store) error
	if c.Create != nil {
		step := c.Create.Step
		if step == 0 {
			step = config.DefaultSegmentStep
		}
		prepare = func(ctx context.Context, st segment.Store) error {
			err := st.Create(ctx, segment.Tag{Name: tag, Step: step, Max: c.Create.Start, Description: "created by flurry serve for namespace " + ns.name})
			if err != nil && !errors.Is(err, segment.ErrTagExists) {
				return fmt.Errorf("creating tag %s: %w", tag, err)
			}
			return nil
		}
	}
	log := b.opts.Logger.With("namespace", ns.name)
	// With several stores the namespace starts when any one opens; the others are
	// opened in the background (and get the tag) when they answer.
	stores, err := segment.OpenStores(ctx, urls, b.opts.openSegment, segment.OpenOptions{
		Prepare: prepare, Clock: b.clock, Logger: log,
	})
	if err != nil {
		if len(urls) == 1 {
			return fmt.Errorf("opening segment store %s: %w", lease.RedactURL(urls[0]), err)
		}
		return err
	}
	for _, st := range stores {
		ns.segStores = append(ns.segStores, st)
		ns.closers = append(ns.closers, func(context.Context) error { return st.Close() })
	}
	res, mod, err := segment.CheckResidues(len(ns.segStores), c.Residues, c.Modulus)
	if err != nil {
		return err
	}
	ns.segResidues, ns.segModulus = res, mod
	a, err := segment.New(ctx, segment.Options{
		Stores: ns.segStores, Residues: c.Residues, Modulus: c.Modulus, Tag: tag, Prefetch: c.Prefetch, MaxStep: c.MaxStep,
		Target: c.Target.Or(0), Runway: c.Runway.Or(0),
		FetchTimeout: c.FetchTimeout.Or(0), Clock: b.clock,
		Logger: log,
	})
	if err != nil {
		if errors.Is(err, segment.ErrUnknownTag) {
			return fmt.Errorf("%w; create it with flurry segment create, or add create: {step: 1000} to the namespace's segment settings", err)
		}
		return err
	}
	ns.alloc, ns.ints = a, a
	ns.ids.setSegments(ns.segStores)
	if embedded {
		// The tag exists, so segments.json does: from now on a start that
		// finds no segments directory is refused (defaultSegmentURL).
		return recordSegments(b.dataDir)
	}
	return nil
}

// The embedded default's segment state in the data directory: a segment/filestore
// directory, or the SQLite file of a flurry from before the file store.
const (
	defaultSegmentDir   = "segments"
	legacySegmentSQLite = "segments.db"
)

// defaultSegmentURL returns the store of a segment namespace that names none: the
// file store in <data>/segments. A data directory made by an earlier flurry holds
// the counters in <data>/segments.db (SQLite) instead; starting the file store
// beside it would issue IDs from 1 again, IDs that were issued already. So while the
// file store has no state and that file exists, a program with the SQLite store
// keeps using it, and one without refuses to start. A file store without state that the data
// directory's record (or its own lock file) says held the counters was deleted,
// and is refused too.
func (b *builder) defaultSegmentURL(name string) (string, error) {
	if err := os.MkdirAll(b.dataDir, 0o755); err != nil {
		return "", fmt.Errorf("creating the data directory: %w; check --data", err)
	}
	dir := filepath.Join(b.dataDir, defaultSegmentDir)
	has, err := segfile.HasState(dir)
	if err != nil {
		return "", err
	}
	legacy := filepath.Join(b.dataDir, legacySegmentSQLite)
	if !has {
		rec, err := readDataRecord(b.dataDir)
		if err != nil {
			return "", err
		}
		if rec.Segments {
			return "", fmt.Errorf("%s holds no %s, but %s records that this data directory's segment namespaces kept their counters there: starting without them would hand out IDs again; stop the servers and restore %s from a backup, or, without one, create each tag again above the highest ID in use (flurry segment create file://%s TAG --start N)",
				dir, segfile.StateFile, filepath.Join(b.dataDir, dataRecordFile), dir, dir)
		}
		if _, err := os.Stat(legacy); err == nil {
			if err := engines.Check(engines.SegmentStore, "sqlite"); err != nil {
				return "", fmt.Errorf("%s holds this namespace's counters from an earlier flurry (SQLite); without the SQLite store this flurry will not start the file store %s over them (it would issue those IDs again), and with it it keeps using the file: %w", legacy, dir, err)
			}
			b.opts.Logger.Info("segment namespace: keeping the SQLite file of an earlier flurry as its store", "namespace", name, "file", legacy)
			return "sqlite://" + legacy, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("checking for an earlier flurry's %s: %w", legacy, err)
		}
	}
	return "file://" + dir, nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", "; ")
}
