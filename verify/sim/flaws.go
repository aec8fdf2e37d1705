package sim

import (
	"context"
	"sync"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/leasestep"
	"github.com/flurryid/flurry/lease"
)

// Flaw is a known-bad variant of the lease protocol. The simulation runs the real
// session code with one switched on, to show that its checker catches it. The
// variants are the simulation's: they reach the session through its store, which
// hands the session steps that replace the protocol's (package leasestep), or
// which misreports what it holds. A session on any other store runs the protocol.
type Flaw uint8

const (
	// FenceFromReply measures the grant's end (its fence) from the renewal's reply
	// instead of its send: a slow reply stretches the fence past the store's expiry.
	FenceFromReply Flaw = 1 << iota
	// GrantBeforeReserve grants the generator a reservation before the store has
	// it: the grant the session makes once the store write succeeded, made before
	// the write.
	GrantBeforeReserve
	// AboveWithoutPlusOne lets a new holder issue in the tick of the mark earlier
	// holders left instead of strictly after it: the store reports each mark one
	// tick low when it hands out a value, and the session starts above that.
	AboveWithoutPlusOne
	// GrantBeforeJournal lets the generator issue through a new journal mark before
	// the journal has it: a crash before the write leaves the successor a mark
	// below IDs the crashed run issued.
	GrantBeforeJournal
	// PastBudget bounds the generator by the journal's mark only, not by the
	// store's reservation: through a long outage it issues past what the store
	// holds.
	PastBudget
)

// flawSteps returns the session steps of the variants in f, on the node's clock
// clk: the protocol's for every step that no variant of f replaces.
func flawSteps(f Flaw, clk clock.Clock) leasestep.Steps {
	var st leasestep.Steps
	if f&FenceFromReply != 0 {
		st.FenceFrom = func(int64) int64 { return clk.Now() } // read after the reply
	}
	if f&GrantBeforeReserve != 0 {
		st.Reserve = func(write func() error, grant func()) error {
			grant()
			return write()
		}
	}
	if f&GrantBeforeJournal != 0 {
		st.Journal = func(save func() error, grant func()) error {
			grant()
			return save()
		}
	}
	if f&PastBudget != 0 {
		st.Through = func(_, journal int64) int64 { return journal }
	}
	return st
}

// simStore is a store of the simulation: a lease.Store that hands its sessions the
// run's steps.
type simStore interface {
	lease.Store
	leasestep.Source
}

// lowMarkStore is the store of AboveWithoutPlusOne: it reports each value's mark
// one tick low where a session reads the mark it starts above (Acquire,
// AcquireValue, List), so that the session starts in the mark's own tick, as one
// that starts at the mark instead of after it does. A Release with the very mark a
// claim reported (an abandoned claim, or a holder that issued nothing) gets the tick
// back, so that the store's own marks stay true.
type lowMarkStore struct {
	simStore
	tick int64 // ms
	mu   sync.Mutex
	low  map[string]int64 // the mark reported low, by token
}

func newLowMarkStore(st simStore, tick time.Duration) *lowMarkStore {
	return &lowMarkStore{simStore: st, tick: max(1, tick.Milliseconds()), low: map[string]int64{}}
}

func (st *lowMarkStore) lower(l lease.Lease, err error) (lease.Lease, error) {
	if err == nil && l.Mark > 0 {
		l.Mark -= st.tick
		st.mu.Lock()
		st.low[l.Token] = l.Mark
		st.mu.Unlock()
	}
	return l, err
}

// Acquire implements lease.Store, the mark one tick low.
func (st *lowMarkStore) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	return st.lower(st.simStore.Acquire(ctx, scope, size, owner, ttl))
}

// AcquireValue implements lease.Store, the mark one tick low.
func (st *lowMarkStore) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	return st.lower(st.simStore.AcquireValue(ctx, scope, value, owner, ttl))
}

// List implements lease.Store, every mark one tick low.
func (st *lowMarkStore) List(ctx context.Context, scope string) ([]lease.Record, error) {
	recs, err := st.simStore.List(ctx, scope)
	for i := range recs {
		if recs[i].Mark > 0 {
			recs[i].Mark -= st.tick
		}
	}
	return recs, err
}

// Release implements lease.Store, with the tick back on a mark reported low.
func (st *lowMarkStore) Release(ctx context.Context, l lease.Lease, mark int64) error {
	st.mu.Lock()
	if low, ok := st.low[l.Token]; ok && mark == low {
		mark += st.tick
	}
	st.mu.Unlock()
	return st.simStore.Release(ctx, l, mark)
}
