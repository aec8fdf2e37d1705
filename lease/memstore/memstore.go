// Package memstore keeps node-value leases in memory: for tests and for the
// deterministic simulation (verify/sim), which runs thousands of sessions against
// it. It is a complete lease.Store, held to the conformance suite leasetest like the
// engines' stores, but it keeps nothing when the process ends, so it cannot guard a
// value across processes: never use it to issue IDs that are stored.
//
// Expiry is judged by the clock given to New, so a simulation can give the store a
// clock of its own, with its own rate error. Tokens are counted, not random, so a run
// of a simulation is the same for the same seed.
package memstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// Store is a lease.Store in memory. Its zero value is not usable; call New.
type Store struct {
	clk clock.Clock

	mu     sync.Mutex
	scopes map[string]map[int64]*record
	tokens int64
	closed bool
	id     string // Identity's, made on its first call
}

type record struct {
	owner   string
	token   string
	expires int64 // clock ns; the lease is live while the clock reads less
	mark    int64
	epoch   int64
}

// New returns an empty store whose leases expire by clk. Nil means clock.NewSystem().
func New(clk clock.Clock) *Store {
	if clk == nil {
		clk = clock.NewSystem()
	}
	return &Store{clk: clk, scopes: map[string]map[int64]*record{}}
}

func (s *Store) live(r *record, now int64) bool { return r.token != "" && r.expires > now }

func (s *Store) grant(scope string, v int64, owner string, ttl time.Duration, now int64) lease.Lease {
	vals := s.scopes[scope]
	if vals == nil {
		vals = map[int64]*record{}
		s.scopes[scope] = vals
	}
	r := vals[v]
	if r == nil {
		r = &record{}
		vals[v] = r
	}
	s.tokens++
	r.owner, r.token, r.expires = owner, "m"+strconv.FormatInt(s.tokens, 10), now+int64(ttl)
	r.epoch++
	return lease.Lease{Scope: scope, Value: v, Owner: owner, Token: r.token, Mark: r.mark, Expires: time.Unix(0, r.expires).UTC(), Epoch: r.epoch}
}

func (s *Store) check() error {
	if s.closed {
		return fmt.Errorf("lease/memstore: store closed")
	}
	return nil
}

// Acquire implements lease.Store. It looks at the values in order, so it suits pools
// of up to some thousands of values.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return lease.Lease{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return lease.Lease{}, err
	}
	now := s.clk.Now()
	vals := s.scopes[scope]
	best, bestMark := int64(-1), int64(0)
	for v := int64(0); v < size; v++ {
		r, ok := vals[v]
		if !ok {
			if best < 0 || bestMark > 0 {
				best, bestMark = v, 0
			}
			break // a never-used value: only a lower one with mark 0 could beat it, and it came first
		}
		if s.live(r, now) {
			continue
		}
		if best < 0 || r.mark < bestMark {
			best, bestMark = v, r.mark
		}
	}
	if best < 0 {
		return lease.Lease{}, fmt.Errorf("lease/memstore: scope %s, %d values: %w", scope, size, lease.ErrNoFreeValue)
	}
	return s.grant(scope, best, owner, ttl, now), nil
}

// AcquireValue implements lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return lease.Lease{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return lease.Lease{}, err
	}
	now := s.clk.Now()
	if r := s.scopes[scope][value]; r != nil && s.live(r, now) {
		return lease.Lease{}, fmt.Errorf("lease/memstore: scope %s, value %d: %w", scope, value, lease.ErrNoFreeValue)
	}
	return s.grant(scope, value, owner, ttl, now), nil
}

// held returns l's record when l is the live lease of its value.
func (s *Store) held(l lease.Lease, op string) (*record, int64, error) {
	if err := s.check(); err != nil {
		return nil, 0, err
	}
	now := s.clk.Now()
	r := s.scopes[l.Scope][l.Value]
	if r == nil || r.token != l.Token || !s.live(r, now) {
		return nil, 0, fmt.Errorf("lease/memstore: %s %s/%d: %w", op, l.Scope, l.Value, lease.ErrLost)
	}
	return r, now, nil
}

// Renew implements lease.Store.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTTL(ttl); err != nil {
		return l, err
	}
	return s.renew(ctx, l, ttl, mark)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckPinTTL(ttl); err != nil {
		return l, err
	}
	return s.renew(ctx, l, ttl, mark)
}

func (s *Store) renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return l, err
	}
	if err := ctx.Err(); err != nil {
		return l, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, now, err := s.held(l, "renew")
	if err != nil {
		return l, err
	}
	r.expires = now + int64(ttl)
	r.mark = max(r.mark, mark)
	r.epoch++
	out := l
	out.Mark, out.Expires, out.Epoch = r.mark, time.Unix(0, r.expires).UTC(), r.epoch
	return out, nil
}

// Takeover implements lease.Store.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return l, err
	}
	if err := ctx.Err(); err != nil {
		return l, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, now, err := s.held(l, "take over")
	if err != nil {
		return l, err
	}
	before := r.mark
	out := s.grant(l.Scope, l.Value, owner, ttl, now)
	r.mark = max(r.mark, mark)
	out.Mark = before
	return out, nil
}

// Release implements lease.Store.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) error {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, _, err := s.held(l, "release")
	if err != nil {
		return err
	}
	*r = record{mark: mark, epoch: r.epoch}
	return nil
}

// List implements lease.Store.
func (s *Store) List(ctx context.Context, scope string) ([]lease.Record, error) {
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	now := s.clk.Now()
	var out []lease.Record
	for v, r := range s.scopes[scope] {
		out = append(out, s.record(scope, v, r, now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out, nil
}

func (s *Store) record(scope string, v int64, r *record, now int64) lease.Record {
	rec := lease.Record{Scope: scope, Value: v, Mark: r.mark, Epoch: r.epoch}
	if s.live(r, now) {
		rec.Owner, rec.Token, rec.Held, rec.Expires = r.owner, r.token, true, time.Unix(0, r.expires).UTC()
	}
	return rec
}

// Lookup returns the record of one value now, without allocating: for a checker
// that compares every issued ID with the store's state. ok is false when the value
// never had a lease.
func (s *Store) Lookup(scope string, value int64) (rec lease.Record, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.scopes[scope][value]
	if r == nil {
		return lease.Record{}, false
	}
	return s.record(scope, value, r, s.clk.Now()), true
}

// Close implements lease.Store: later calls fail. The leases are gone with the store.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// Identity is private: the store lives in this process only. Its ID is random,
// made on the first call.
func (s *Store) Identity(context.Context) (lease.StoreIdentity, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		s.id = "mem:" + storeid.Random()
	}
	return lease.StoreIdentity{ID: s.id, Private: true}, nil
}
