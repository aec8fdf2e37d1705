package sim

import (
	"fmt"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/lease"
)

// Violation is one breach of an invariant the checker found.
type Violation struct {
	Kind   string
	Node   int
	Inc    int
	At     time.Duration // simulated time since the start
	ID     flurry.ID
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at +%v node %d (process %d) id %d: %s", v.Kind, v.At, v.Node, v.Inc, int64(v.ID), v.Detail)
}

// holder is one acquisition of a value: from the store's point of view.
type holder struct {
	token       string
	owner       string
	value       *valueRec
	above       int64 // the mark at acquisition, Unix ms
	acquiredAt  int64 // true time the store applied the acquisition
	expires     int64 // the store's expiry of the lease, store-clock ns
	releasedAt  int64 // true time of the release; 0 while not released
	first, last flurry.ID
	tail        [tailLen]flurry.ID // the last IDs it issued, for exact duplicates
	tailN       int
}

const tailLen = 64

type valueRec struct {
	scope   string
	value   int64
	holders []*holder // in the order the store gave the value
}

type ownerKey struct {
	owner string
	value int64
	scope string
}

type valueKey struct {
	scope string
	value int64
}

// checker checks every issued ID against the invariants:
//
//   - unique: no ID is issued twice (exactly, against each earlier holder's last IDs);
//   - order: each holder's IDs increase, each generator's IDs increase across the values
//     it holds, and a value's holders issue in the order the store gave them the value
//     (a later holder's IDs are above every earlier holder's);
//   - range: the ID fits the layout, with the node's pool and a value of the pool;
//   - reserved: the ID's tick starts at or before the value's mark in the store when
//     it is issued (the window was reserved before issuing);
//   - above: the ID's tick starts after the mark the holder found when it acquired;
//   - live: the generator decided to issue (its last clock read) while the store held
//     its lease: acquired, not released, not expired by the store's clock.
type checker struct {
	w       *LeaseWorld
	byToken map[string]*holder
	byOwner map[ownerKey]*holder
	values  map[valueKey]*valueRec
	holders int64
	first   []Violation
	byKind  map[string]int64
}

func (c *checker) init(w *LeaseWorld) {
	c.w = w
	c.byToken = map[string]*holder{}
	c.byOwner = map[ownerKey]*holder{}
	c.values = map[valueKey]*valueRec{}
	c.byKind = map[string]int64{}
}

const keepViolations = 20

func (c *checker) violate(kind string, n *leaseNode, id flurry.ID, detail string) {
	c.byKind[kind]++
	if len(c.first) < keepViolations {
		c.first = append(c.first, Violation{Kind: kind, Node: n.ID, Inc: n.inc, At: time.Duration(c.w.sim.now - simStart), ID: id, Detail: detail})
	}
}

func (w *LeaseWorld) acquired(l lease.Lease) {
	c := &w.chk
	vk := valueKey{l.Scope, l.Value}
	v := c.values[vk]
	if v == nil {
		v = &valueRec{scope: l.Scope, value: l.Value}
		c.values[vk] = v
	}
	h := &holder{token: l.Token, owner: l.Owner, value: v, above: l.Mark, acquiredAt: w.sim.now, expires: l.Expires.UnixNano()}
	v.holders = append(v.holders, h)
	c.byToken[l.Token] = h
	c.byOwner[ownerKey{l.Owner, l.Value, l.Scope}] = h
	c.holders++
	w.Acquisitions++
	w.sim.Trace(l.Value, l.Mark)
}

// renewed records a renewal the store applied, made by the process owner. A
// process that renews a lease another process acquired resumed it from its
// journal: from then on its IDs are that holder's too, checked as one acquisition
// that changed process.
func (w *LeaseWorld) renewed(l lease.Lease, owner string) {
	h := w.chk.byToken[l.Token]
	if h == nil {
		return
	}
	h.expires = l.Expires.UnixNano()
	k := ownerKey{owner, l.Value, l.Scope}
	if owner != "" && w.chk.byOwner[k] != h {
		w.chk.byOwner[k] = h
		w.Resumes++
	}
}

// takenOver records a takeover the store applied, made by the process owner: it
// resumed the run of old's holder from its journal, and the new lease l's token
// names that run from now on (old's is retired). A takeover of a lease the checker
// does not know is an acquisition.
func (w *LeaseWorld) takenOver(old, l lease.Lease, owner string) {
	h := w.chk.byToken[old.Token]
	if h == nil {
		w.acquired(l)
		return
	}
	if old.Owner != owner && w.alive[old.Owner] {
		// A process on a copy of a running node's journal: a run of its own, which
		// must start above everything the original issues, also after this.
		w.acquired(l)
		return
	}
	h.token = l.Token
	w.chk.byToken[l.Token] = h
	w.renewed(l, owner)
	if k := (ownerKey{l.Owner, l.Value, l.Scope}); w.chk.byOwner[k] != h {
		w.chk.byOwner[k] = h
	}
}

func (w *LeaseWorld) released(l lease.Lease) {
	if h := w.chk.byToken[l.Token]; h != nil && h.releasedAt == 0 {
		h.releasedAt = w.sim.now
	}
}

// issued checks one ID that node n's generator returned just now.
func (c *checker) issued(n *leaseNode, id flurry.ID) {
	w := c.w
	// Decompose refuses a negative ID and bits above the layout, so a tick it
	// returns fits the time field.
	p, err := w.lay.Decompose(id)
	if err != nil || p.Nodes[0] != int64(n.group) || id <= 0 {
		c.violate("range", n, id, fmt.Sprintf("fields %+v, node's pool %d: %v", p, n.group, err))
		return
	}
	if id <= n.last {
		c.violate("order-generator", n, id, fmt.Sprintf("after %d from the same generator", int64(n.last)))
	}
	n.last = id
	value := p.Nodes[1]
	scope := n.scope
	h := c.byOwner[ownerKey{n.owner, value, scope}]
	if h == nil {
		c.violate("live", n, id, fmt.Sprintf("issued for value %d, which this process never acquired", value))
		return
	}
	tickMs := w.lay.TickTime(p.Tick).UnixMilli()
	// reserved: at or before the store's mark now.
	if rec, ok := w.store.Lookup(scope, value); !ok || tickMs > rec.Mark {
		c.violate("reserved", n, id, fmt.Sprintf("tick %s is after the store's mark %s: issued before it was reserved",
			time.UnixMilli(tickMs).UTC().Format("15:04:05.000"), time.UnixMilli(rec.Mark).UTC().Format("15:04:05.000")))
	}
	// above: after the mark found at acquisition.
	if tickMs <= h.above {
		c.violate("above", n, id, fmt.Sprintf("tick %s is not after the mark %s the holder acquired the value with",
			time.UnixMilli(tickMs).UTC().Format("15:04:05.000"), time.UnixMilli(h.above).UTC().Format("15:04:05.000")))
	}
	// live: the generator's decision (its last clock read) fell inside the lease.
	t := n.lastRead
	switch {
	case t < h.acquiredAt:
		c.violate("live", n, id, "decided before the store gave the lease")
	case h.releasedAt != 0 && t >= h.releasedAt:
		c.violate("live", n, id, fmt.Sprintf("decided %v after the lease was released", time.Duration(t-h.releasedAt)))
	case w.sclk.at(t) >= h.expires:
		c.violate("live", n, id, fmt.Sprintf("decided %v after the lease expired in the store", time.Duration(w.sclk.at(t)-h.expires)))
	}
	// order within the holder, and between the value's holders.
	if h.last != 0 && id <= h.last {
		c.violate("order-holder", n, id, fmt.Sprintf("after %d from the same holder", int64(h.last)))
	}
	before := true
	for _, o := range h.value.holders {
		if o == h {
			before = false
			continue
		}
		if o.first == 0 {
			continue
		}
		if before && id <= o.last {
			kind := "order-value"
			if o.has(id) {
				kind = "duplicate"
			}
			c.violate(kind, n, id, fmt.Sprintf("not above the earlier holder %s of value %d/%d, which issued up to %d", o.owner, n.group, value, int64(o.last)))
		}
		if !before && id >= o.first {
			c.violate("order-value", n, id, fmt.Sprintf("not below the later holder %s of value %d/%d, which issued from %d", o.owner, n.group, value, int64(o.first)))
		}
	}
	if h.first == 0 {
		h.first = id
	}
	h.last = id
	h.tail[h.tailN%tailLen] = id
	h.tailN++
	w.sim.Trace(int64(id))
}

func (h *holder) has(id flurry.ID) bool {
	for i := 0; i < min(h.tailN, tailLen); i++ {
		if h.tail[i] == id {
			return true
		}
	}
	return false
}
