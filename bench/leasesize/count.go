package main

import (
	"context"
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/lease"
)

// kind is one method of lease.Store.
type kind int

const (
	kAcquire kind = iota
	kAcquireValue
	kRenew
	kRelease
	kList
	kTakeover
	kScopeMark
	nKinds
)

func (k kind) String() string {
	return [...]string{"acquire", "acquire_value", "renew", "release", "list", "takeover", "scope_mark"}[k]
}

// write reports whether the call changes the store: every method but List and
// ScopeMark.
func (k kind) write() bool { return k != kList && k != kScopeMark }

// hist is a latency histogram with about 6% resolution: 16 buckets per power of two,
// so that its memory is fixed however many calls a run makes. It is safe for
// concurrent use.
type hist struct {
	buckets [64 * 16]atomic.Int64
	n, sum  atomic.Int64
	max     atomic.Int64
}

func bucketOf(ns int64) int {
	if ns < 16 {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) - 5 // ns>>e is in [16, 32)
	return (e+1)*16 + int(ns>>e) - 16
}

// upper returns the largest value bucket i holds.
func upper(i int) int64 {
	if i < 16 {
		return int64(i)
	}
	e := i/16 - 1
	m := int64(i%16 + 16)
	return (m+1)<<e - 1
}

func (h *hist) add(d time.Duration) {
	ns := int64(d)
	h.buckets[bucketOf(ns)].Add(1)
	h.n.Add(1)
	h.sum.Add(ns)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// quantile returns a duration at or above the q-quantile of what was added, within
// the bucket's resolution, and never above the maximum.
func (h *hist) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.5)
	rank = min(max(rank, 1), n)
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			return time.Duration(min(upper(i), h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}

// calls counts one kind of store call.
type calls struct {
	lat  hist
	errs atomic.Int64
	lost atomic.Int64 // errors that match lease.ErrLost
}

// phase is what the store saw between two snapshots: starting the sessions, the
// measured window, closing them.
type phase struct {
	start time.Time
	kinds [nKinds]calls
	// listed is how many records List returned in all: the size of the reads that
	// order scope costs.
	listed atomic.Int64
	// slots counts write calls per 100 ms of the phase, for the peak rate; calls past
	// the last slot are not counted there.
	slots []atomic.Int64

	mu     sync.Mutex
	errors map[string]int // error text -> count, at most maxErrorTexts texts
}

const slot = 100 * time.Millisecond

func newPhase(now time.Time, length time.Duration) *phase {
	return &phase{start: now, slots: make([]atomic.Int64, length/slot+1), errors: map[string]int{}}
}

// writes returns how many calls that change the store the phase saw.
func (p *phase) writes() int64 {
	var n int64
	for k := range nKinds {
		if k.write() {
			n += p.kinds[k].lat.n.Load()
		}
	}
	return n
}

// peak returns the most write calls in one slot, as a rate per second.
func (p *phase) peak() float64 {
	var m int64
	for i := range p.slots {
		m = max(m, p.slots[i].Load())
	}
	return float64(m) / slot.Seconds()
}

// countingStore is a lease.Store that passes every call to the store it wraps and
// counts it, with its latency and its error, in the current phase.
type countingStore struct {
	st  lease.Store
	cur atomic.Pointer[phase]
}

const maxErrorTexts = 8

var _ lease.Store = (*countingStore)(nil)

func newCountingStore(st lease.Store, first *phase) *countingStore {
	c := &countingStore{st: st}
	c.cur.Store(first)
	return c
}

// next starts a new phase and returns the one it ends.
func (c *countingStore) next(p *phase) *phase { return c.cur.Swap(p) }

func (c *countingStore) observe(k kind, start time.Time, err error) {
	p := c.cur.Load()
	end := time.Now()
	kc := &p.kinds[k]
	kc.lat.add(end.Sub(start))
	if k.write() {
		if i := int(end.Sub(p.start) / slot); i >= 0 && i < len(p.slots) {
			p.slots[i].Add(1)
		}
	}
	if err == nil {
		return
	}
	kc.errs.Add(1)
	if errors.Is(err, lease.ErrLost) {
		kc.lost.Add(1)
	}
	p.mu.Lock()
	msg := k.String() + ": " + err.Error()
	if _, ok := p.errors[msg]; ok || len(p.errors) < maxErrorTexts {
		p.errors[msg]++
	}
	p.mu.Unlock()
}

// errorTexts returns the phase's first distinct error texts and how often each came.
func (p *phase) errorTexts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.errors))
	for k, v := range p.errors {
		out[k] = v
	}
	return out
}

func (c *countingStore) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	t := time.Now()
	l, err := c.st.Acquire(ctx, scope, size, owner, ttl)
	c.observe(kAcquire, t, err)
	return l, err
}

func (c *countingStore) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	t := time.Now()
	l, err := c.st.AcquireValue(ctx, scope, value, owner, ttl)
	c.observe(kAcquireValue, t, err)
	return l, err
}

func (c *countingStore) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	t := time.Now()
	l2, err := c.st.Renew(ctx, l, ttl, mark)
	c.observe(kRenew, t, err)
	return l2, err
}

func (c *countingStore) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (lease.Lease, error) {
	t := time.Now()
	l2, err := c.st.Takeover(ctx, l, owner, ttl, mark)
	c.observe(kTakeover, t, err)
	return l2, err
}

func (c *countingStore) Release(ctx context.Context, l lease.Lease, mark int64) error {
	t := time.Now()
	err := c.st.Release(ctx, l, mark)
	c.observe(kRelease, t, err)
	return err
}

func (c *countingStore) List(ctx context.Context, scope string) ([]lease.Record, error) {
	t := time.Now()
	rs, err := c.st.List(ctx, scope)
	c.cur.Load().listed.Add(int64(len(rs)))
	c.observe(kList, t, err)
	return rs, err
}

// markingStore is a countingStore of a store that implements lease.ScopeMarker,
// which it passes on, counted, so that sessions read the scope's mark as they
// would without the wrapper.
type markingStore struct{ *countingStore }

func (c markingStore) ScopeMark(ctx context.Context, scope string, value int64) (int64, error) {
	t := time.Now()
	m, err := c.st.(lease.ScopeMarker).ScopeMark(ctx, scope, value)
	c.observe(kScopeMark, t, err)
	return m, err
}

// store returns the wrapper to give sessions: one with ScopeMark when the wrapped
// store has it.
func (c *countingStore) store() lease.Store {
	if _, ok := c.st.(lease.ScopeMarker); ok {
		return markingStore{c}
	}
	return c
}

// Close does nothing: the tool closes the store it wraps itself, after cleaning up.
func (c *countingStore) Close() error { return nil }
