package sim

import (
	"context"
	"time"

	"github.com/flurryid/flurry/lease"
)

// Seam is a known-bad variant of resuming from a copied or restored journal. It is
// injected at the simulation's own seams, its store and its journals, around the
// real session code, to show that the checker catches what the protocol's checks
// prevent.
type Seam uint8

const (
	// TakeoverKeepsToken makes the store's Takeover a Renew: the journal's token
	// stays live, so every copy of a journal resumes it, and the original renews on.
	TakeoverKeepsToken Seam = 1 << iota
	// TrustCopies loads a copied journal as the node's own (Copied cleared).
	TrustCopies
	// IgnoreEpoch loads a journal with the store's epoch of its value, so that one
	// restored from an earlier copy looks as current as its predecessor left it.
	IgnoreEpoch
)

// keepTokenStore is the store of TakeoverKeepsToken: a Takeover is a Renew of the
// journal's token, answering the mark the value had before it.
type keepTokenStore struct{ *LeaseStore }

// Takeover implements lease.Store as a Renew that keeps l's token.
func (st keepTokenStore) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (lease.Lease, error) {
	var before int64
	if rec, ok := st.w.store.Lookup(l.Scope, l.Value); ok {
		before = rec.Mark
	}
	out, err := st.LeaseStore.Renew(ctx, l, ttl, mark)
	out.Mark = before
	return out, err
}

// seamJournal is a node's journal seen through the run's Seams.
type seamJournal struct {
	*journal
	seams Seam
}

// Load implements lease.Journal.
func (j seamJournal) Load(ctx context.Context) (lease.JournalEntry, error) {
	e, err := j.journal.Load(ctx)
	if j.seams&TrustCopies != 0 {
		e.Copied = false
	}
	if j.seams&IgnoreEpoch != 0 && e.Token != "" {
		if rec, ok := j.n.w.store.Lookup(e.Scope, e.Value); ok {
			e.Epoch = max(e.Epoch, rec.Epoch)
		}
	}
	return e, err
}

// maxCopies bounds the nodes a run adds on copied journals.
const maxCopies = 40

// scheduleJournalCopies copies, every few simulated minutes, the journal of a node
// that holds or held a lease, running or crashed, into a new data directory and
// starts a process there, as cp -a of a data directory, a cloned virtual machine
// or volume would (Clones). The copy loads as Copied until its process saves it.
func (w *LeaseWorld) scheduleJournalCopies() {
	s := w.sim
	var copyOne func()
	copyOne = func() {
		s.At(s.now+w.exp(60), func() {
			if w.ended || w.Copies >= maxCopies {
				return
			}
			n := w.nodes[w.frng.IntN(len(w.nodes))]
			if n.journal != nil && n.journal.entry.Token != "" && n.fixedID == 0 {
				c := &leaseNode{Node: newNode(s, len(w.nodes), n.ppm, n.wallOff), w: w, group: n.group, inc: 100 + n.inc}
				c.fixedID = n.ID + 1
				c.journal = &journal{n: c, entry: n.journal.entry, copied: true}
				w.nodes = append(w.nodes, c)
				w.Copies++
				c.boot()
			}
			copyOne()
		})
	}
	copyOne()
}

// scheduleRestores saves, now and then, a copy of the node's journal (a backup, a
// snapshot of its volume), and later restores it in place: the process is killed,
// the journal file is the copy (same file: not Copied), and half the time the
// clock comes back behind by as long as the copy is old (a reverted snapshot of a
// virtual machine), before the next process starts (Restores). A copy is restored
// only once the store has recorded a write after the one it names: restored
// sooner, the epoch cannot tell it from its predecessor's own journal
// (docs/correctness.md).
func (n *leaseNode) scheduleRestores() {
	w, s := n.w, n.w.sim
	var backup func()
	backup = func() {
		s.At(s.now+w.exp(4), func() {
			if w.ended {
				return
			}
			j := n.journal
			if j.entry.Token == "" || n.deadFrom != 0 || n.client == nil {
				backup()
				return
			}
			saved, at := j.entry, s.now
			later := int64(time.Second) + w.frng.Int64N(int64(5*time.Minute))
			s.At(s.now+later, func() {
				if w.ended {
					return
				}
				rec, ok := w.store.Lookup(saved.Scope, saved.Value)
				if n.deadFrom == 0 && n.client != nil && !n.starting && ok && rec.Epoch > saved.Epoch {
					w.Kills++
					w.Restores++
					n.crash(w.frng.Int64N(int64(5 * time.Second)))
					j.entry, j.copied = saved, false
					if w.frng.IntN(2) == 0 {
						n.step(-(s.now - at))
					}
				}
				backup()
			})
		})
	}
	backup()
}
