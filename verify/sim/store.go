package sim

import (
	"context"
	"errors"
	"time"

	"github.com/flurryid/flurry/internal/leasestep"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
)

// errUnavailable is what a store call returns during an outage.
var errUnavailable = errors.New("sim: store unavailable (injected)")

// netFaults is the state of the network and the store server, shared by every
// store a world wraps.
type netFaults struct {
	downUntil  int64   // true time; calls fail fast before it
	slowUntil  int64   // replies are slow before it
	slowMin    int64   // ns added to a reply while slow, at least ...
	slowMax    int64   // ... and at most
	lossProb   float64 // chance that an applied request's reply never arrives
	driverWait int64   // how long a client waits for a lost reply before it gives up
}

// transport runs op at the store after a request's latency and returns its result
// after the reply's, with the faults injected: an outage fails the call before op; a
// slow reply or a lost one comes after op was applied; a context that ends during
// the request leg leaves op unapplied, during the reply leg applied.
func transport(s *Sim, nf *netFaults, ctx context.Context, op func() error) error {
	r := s.rng
	if s.now < nf.downUntil {
		if err := s.park(ctx, s.now+int64(time.Millisecond)+r.Int64N(int64(20*time.Millisecond))); err != nil {
			return err
		}
		return errUnavailable
	}
	if err := s.park(ctx, s.now+latency(r)); err != nil {
		return err
	}
	if s.now < nf.downUntil {
		return errUnavailable // went down while the request was on its way
	}
	res := op()
	if r.Float64() < nf.lossProb {
		if err := s.park(ctx, s.now+nf.driverWait); err != nil {
			return err
		}
		return errTimeout
	}
	back := latency(r)
	if s.now < nf.slowUntil {
		back += nf.slowMin + r.Int64N(nf.slowMax-nf.slowMin+1)
	}
	if err := s.park(ctx, s.now+back); err != nil {
		return err
	}
	return res
}

type randSource interface {
	Int64N(int64) int64
	Float64() float64
}

// latency is one leg of a store round trip: mostly a fraction of a millisecond to a
// few, with a tail to a few hundred.
func latency(r randSource) int64 {
	l := int64(200*time.Microsecond) + r.Int64N(int64(2*time.Millisecond))
	if r.Float64() < 0.01 {
		l += r.Int64N(int64(300 * time.Millisecond))
	}
	return l
}

// LeaseStore is a lease.Store for simulated nodes: the real in-memory store behind a
// simulated network with faults, telling the world's checker what the store applied.
type LeaseStore struct {
	w     *LeaseWorld
	m     *memstore.Store
	steps leasestep.Steps // the session's steps: the protocol's, or the run's known-bad variants (Flaw)
	owner string          // the process using it: a renewal of another owner's lease is a resume
}

// LeaseSteps implements leasestep.Source: the steps of the run's known-bad
// variants, if any, for the session using the store.
func (st *LeaseStore) LeaseSteps() leasestep.Steps { return st.steps }

// Acquire implements lease.Store.
func (st *LeaseStore) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	var l lease.Lease
	err := transport(st.w.sim, &st.w.net, ctx, func() error {
		var err error
		l, err = st.m.Acquire(context.Background(), scope, size, owner, ttl)
		if err == nil {
			st.w.acquired(l)
		}
		return err
	})
	return l, err
}

// AcquireValue implements lease.Store.
func (st *LeaseStore) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	var l lease.Lease
	err := transport(st.w.sim, &st.w.net, ctx, func() error {
		var err error
		l, err = st.m.AcquireValue(context.Background(), scope, value, owner, ttl)
		if err == nil {
			st.w.acquired(l)
		}
		return err
	})
	return l, err
}

// Renew implements lease.Store.
func (st *LeaseStore) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	out := l
	err := transport(st.w.sim, &st.w.net, ctx, func() error {
		var err error
		out, err = st.m.Renew(context.Background(), l, ttl, mark)
		if err == nil {
			st.w.renewed(out, st.owner)
		}
		return err
	})
	return out, err
}

// Takeover implements lease.Store. To the checker the process resumed the run of
// l's holder from its journal, under a new token, as a renewal by another process
// used to (renewed).
func (st *LeaseStore) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (lease.Lease, error) {
	out := l
	err := transport(st.w.sim, &st.w.net, ctx, func() error {
		var err error
		out, err = st.m.Takeover(context.Background(), l, owner, ttl, mark)
		if err == nil {
			st.w.takenOver(l, out, st.owner)
		}
		return err
	})
	return out, err
}

// Release implements lease.Store.
func (st *LeaseStore) Release(ctx context.Context, l lease.Lease, mark int64) error {
	return transport(st.w.sim, &st.w.net, ctx, func() error {
		err := st.m.Release(context.Background(), l, mark)
		if err == nil {
			st.w.released(l)
		}
		return err
	})
}

// List implements lease.Store.
func (st *LeaseStore) List(ctx context.Context, scope string) ([]lease.Record, error) {
	var out []lease.Record
	err := transport(st.w.sim, &st.w.net, ctx, func() error {
		var err error
		out, err = st.m.List(context.Background(), scope)
		return err
	})
	return out, err
}

// Close implements lease.Store; the memory stays for the other nodes.
func (st *LeaseStore) Close() error { return nil }
