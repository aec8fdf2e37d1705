package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/javahash"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
	"github.com/flurryid/flurry/server/config"
	"github.com/prometheus/client_golang/prometheus"
)

// errNoTag is returned by tagSet.get for a tag the last reload did not list.
var errNoTag = errors.New("the tag is not in the table's last listing")

// tagSet serves every tag of a set of segment stores, as a Leaf server serves every
// row of leaf_alloc and a tinyid server every row of tiny_id_info: an allocator
// per tag, made on the tag's first request, and the tag list read again every
// reload period (Leaf's updateCacheFromDbAtEveryMinute). Removed tags are closed,
// handing their ranges back.
type tagSet struct {
	what   string // "leaf" or "tinyid", for logs and the metrics' route label
	stores []segment.Store
	urls   []string
	opts   segment.Options // the template: Stores and Tag are set per tag
	// strict serves only listed tags (Leaf answers -2 for others); otherwise any tag
	// the stores know is tried on first use (tinyid).
	strict bool
	// order, when set, gives a tag's stores in the order its allocator must list
	// them and the function from the allocator's IDs to the tag's IDs (tinyid's
	// delta/remainder); nil keeps the stores and the IDs as they are.
	order func(ctx context.Context, tag string) ([]segment.Store, func(flurry.ID) flurry.ID, error)
	log   *slog.Logger
	// observe gives a tag's request-latency observer; the server sets it before it
	// serves (newMetrics).
	observe func(tag string) prometheus.Observer

	mu       sync.Mutex
	tags     map[string]segment.Tag // the last listing (of the first store that answered)
	loadedAt time.Time
	loadErr  error
	allocs   map[string]*tagAlloc
	closed   bool
	// folded maps each listed tag's generalCI key to the tag, made on first use
	// after a listing; see canonical.
	folded map[string]string
	// cache is Leaf's cache of tags (SegmentIDGenImpl's ConcurrentHashMap), kept
	// as Leaf's updateCacheFromDb keeps it, for the order of /cache's rows; nil
	// outside strict sets.
	cache *javahash.ConcurrentHashMap

	stop chan struct{}
	done chan struct{}
}

// tagAlloc is one tag's allocator, made on first use.
type tagAlloc struct {
	tag   string
	mu    sync.Mutex // held while the allocator is made
	alloc *segment.Allocator
	conv  func(flurry.ID) flurry.ID
	// obs observes the latency of the tag's requests (set with alloc), and
	// issued counts the IDs sent, for the metrics.
	obs    prometheus.Observer
	issued atomic.Int64
}

// newTagSet opens the stores and lists their tags once. A listing that fails is
// logged and retried at every reload; the set serves once one succeeds.
func (b *builder) newTagSet(ctx context.Context, what string, urls []string, tune *config.Segment, reload config.Duration, strict bool) (*tagSet, error) {
	ts := &tagSet{
		what: what, strict: strict, log: b.opts.Logger.With("compat", what),
		allocs: map[string]*tagAlloc{}, tags: map[string]segment.Tag{},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if strict {
		ts.cache = javahash.NewConcurrentHashMap()
	}
	ts.opts = segment.Options{
		Prefetch: tune.Prefetch, MaxStep: tune.MaxStep,
		Target: tune.Target.Or(0), Runway: tune.Runway.Or(0),
		FetchTimeout: tune.FetchTimeout.Or(0), Clock: b.clock, Logger: ts.log,
	}
	for _, u := range urls {
		st, err := b.opts.openSegment(ctx, u)
		if err != nil {
			ts.closeStores()
			return nil, fmt.Errorf("%s: opening segment store %s: %w", what, lease.RedactURL(u), err)
		}
		ts.stores = append(ts.stores, st)
		ts.urls = append(ts.urls, lease.RedactURL(u))
	}
	ts.load(ctx)
	period := reload.Or(config.DefaultReload)
	go ts.run(period)
	return ts, nil
}

func (ts *tagSet) closeStores() {
	for _, st := range ts.stores {
		st.Close()
	}
}

func (ts *tagSet) run(period time.Duration) {
	defer close(ts.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ts.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			ts.load(ctx)
			cancel()
		}
	}
}

// load reads the tag list from the first store that answers, adds new tags and
// closes the allocators of tags that are gone.
func (ts *tagSet) load(ctx context.Context) {
	var tags []segment.Tag
	var order []string
	var errs []error
	ok := false
	for i, st := range ts.stores {
		t, o, err := listInOrder(ctx, st)
		if err != nil {
			errs = append(errs, fmt.Errorf("store %d of %d: %w", i+1, len(ts.stores), err))
			continue
		}
		tags, order, ok = t, o, true
		break
	}
	ts.mu.Lock()
	if !ok {
		err := errors.Join(errs...)
		if ts.loadErr == nil {
			ts.log.Warn("reading the tag list failed; serving the last list and retrying at the next reload", "err", err)
		}
		ts.loadErr = err
		ts.mu.Unlock()
		return
	}
	next := make(map[string]segment.Tag, len(tags))
	for _, t := range tags {
		next[t.Name] = t
	}
	var gone []*tagAlloc
	if ts.strict {
		for name, ta := range ts.allocs {
			if _, still := next[name]; !still {
				ts.log.Info("tag removed from the table; no longer served", "tag", name)
				gone = append(gone, ta)
				delete(ts.allocs, name)
			}
		}
	}
	for name := range next {
		if _, had := ts.tags[name]; !had && !ts.loadedAt.IsZero() {
			ts.log.Info("tag added to the table; served from now on", "tag", name)
		}
	}
	ts.tags, ts.loadedAt, ts.loadErr, ts.folded = next, time.Now(), nil, nil
	if ts.cache != nil && len(order) > 0 {
		// updateCacheFromDb: the new tags in the order of a HashSet of the
		// table's, then the tags gone removed; an empty table changes nothing.
		for _, name := range javahash.NewHashSetOf(order).Keys() {
			if !ts.cache.Has(name) {
				ts.cache.Put(name)
			}
		}
		for _, name := range ts.cache.Keys() {
			if _, still := next[name]; !still {
				ts.cache.Remove(name)
			}
		}
	}
	ts.mu.Unlock()
	for _, ta := range gone {
		ta.close(ctx)
	}
}

func (ta *tagAlloc) close(ctx context.Context) error {
	ta.mu.Lock()
	a := ta.alloc
	ta.mu.Unlock()
	if a != nil {
		return a.Close(ctx)
	}
	return nil
}

// get returns tag's allocator, making it (and taking its first range) on first use.
func (ts *tagSet) get(ctx context.Context, tag string) (*tagAlloc, error) {
	if err := segmentstore.CheckTagName(tag); err != nil {
		return nil, errNoTag
	}
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return nil, segment.ErrClosed
	}
	if _, listed := ts.tags[tag]; ts.strict && !listed {
		ts.mu.Unlock()
		return nil, errNoTag
	}
	ta := ts.allocs[tag]
	if ta == nil {
		ta = &tagAlloc{tag: tag}
		ts.allocs[tag] = ta
	}
	ts.mu.Unlock()

	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.alloc != nil {
		return ta, nil
	}
	stores, conv := ts.stores, func(id flurry.ID) flurry.ID { return id }
	if ts.order != nil {
		var err error
		if stores, conv, err = ts.order(ctx, tag); err != nil {
			return nil, err
		}
	}
	o := ts.opts
	o.Stores, o.Tag = stores, tag
	a, err := segment.New(ctx, o)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	closed := ts.closed || ts.allocs[tag] != ta
	ts.mu.Unlock()
	if closed {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		a.Close(cctx)
		cancel()
		return nil, segment.ErrClosed
	}
	ta.alloc, ta.conv = a, conv
	if ts.observe != nil {
		ta.obs = ts.observe(tag)
	}
	return ta, nil
}

// canonical returns the listed tag that name equals as a column of MySQL's
// utf8_general_ci collation compares them (generalCI), or name when none does:
// tinyid finds its biz_type with WHERE biz_type = ?, so "CX_A" finds the row
// "cx_a", and flurry serves both from that row's one allocator, whatever the
// database's collation.
func (ts *tagSet) canonical(name string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, ok := ts.tags[name]; ok {
		return name
	}
	if ts.folded == nil {
		ts.folded = make(map[string]string, len(ts.tags))
		for t := range ts.tags {
			k := generalCI(t)
			if prev, dup := ts.folded[k]; !dup || t < prev {
				ts.folded[k] = t // two rows equal under the collation: MySQL's unique key forbids it; take one
			}
		}
	}
	if t, ok := ts.folded[generalCI(name)]; ok {
		return t
	}
	return name
}

// generalCI is a key under which two strings are equal when MySQL's
// utf8_general_ci collation finds them equal: trailing spaces ignored (PAD
// SPACE), letters compared by their upper case, Latin-1's accented letters by
// their base letter (é = E, ß = S).
func generalCI(s string) string {
	s = strings.TrimRight(s, " ")
	var b strings.Builder
	for _, r := range s {
		if r >= 0xC0 && r <= 0xFF {
			if base := latin1Base[r-0xC0]; base != '.' {
				r = rune(base)
			}
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// latin1Base is the base letter of U+00C0..U+00FF, '.' for the characters that
// compare as themselves (Æ, Ð, ×, Ø, Þ and their lower cases, ÷).
const latin1Base = "AAAAAA.CEEEEIIII.NOOOOO..UUUUY.SAAAAAA.CEEEEIIII.NOOOOO..UUUUY.Y"

// nextN fills dst with IDs of the tag: all of it, or an error.
func (ta *tagAlloc) nextN(ctx context.Context, dst []flurry.ID) error {
	for filled := 0; filled < len(dst); {
		n, err := ta.alloc.NextN(ctx, dst[filled:])
		for i := filled; i < filled+n; i++ {
			dst[i] = ta.conv(dst[i])
		}
		filled += n
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the allocator returned no ID")
		}
	}
	ta.issued.Add(int64(len(dst)))
	return nil
}

// observe records a request's latency, if the metrics are set up.
func (ta *tagAlloc) observe(start time.Time) {
	if ta.obs != nil {
		ta.obs.Observe(time.Since(start).Seconds())
	}
}

// subject is how the metrics name a tag of the set: "leaf:order",
// "tinyid:test"; "leaf:" alone for a request that names no tag of the table, so
// that callers cannot make series of their own. Namespace names have no colon.
func (ts *tagSet) subject(tag string) string {
	if tag != "" {
		ts.mu.Lock()
		_, listed := ts.tags[tag]
		ts.mu.Unlock()
		if !listed {
			tag = ""
		}
	}
	return ts.what + ":" + tag
}

// served lists the tags that have an allocator, with it, by tag.
func (ts *tagSet) served() []*tagAlloc {
	ts.mu.Lock()
	tas := make([]*tagAlloc, 0, len(ts.allocs))
	for _, ta := range ts.allocs {
		tas = append(tas, ta)
	}
	ts.mu.Unlock()
	out := tas[:0]
	for _, ta := range tas {
		ta.mu.Lock()
		ok := ta.alloc != nil
		ta.mu.Unlock()
		if ok {
			out = append(out, ta)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tag < out[j].tag })
	return out
}

// close stops the reloads, closes every allocator (handing ranges back) and the
// stores.
func (ts *tagSet) close(ctx context.Context) error {
	ts.mu.Lock()
	if ts.closed {
		ts.mu.Unlock()
		return nil
	}
	ts.closed = true
	var tas []*tagAlloc
	for _, ta := range ts.allocs {
		tas = append(tas, ta)
	}
	ts.mu.Unlock()
	close(ts.stop)
	<-ts.done
	var errs []error
	for _, ta := range tas {
		if err := ta.close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for i, st := range ts.stores {
		if err := st.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing store %s: %w", ts.urls[i], err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", ts.what, err)
	}
	return nil
}

// notReady says why the set cannot serve: its tag list was never read.
func (ts *tagSet) notReady() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.loadedAt.IsZero() && ts.loadErr != nil {
		return ts.what + ": the tag list was never read (no store answered); retrying every reload"
	}
	return ""
}
