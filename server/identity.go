package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
)

// privateWarning is what a server says, at start and in its info, of a namespace
// whose store only it can use.
const privateWarning = "only this server can use this %s store (%s): a second server with its own data directory can issue the same IDs; to run several servers, give them one shared %s store"

// identities holds what a namespace's stores report of their data, read at start
// and again by info while a store has not answered.
type identities struct {
	lease    func(ctx context.Context) (lease.StoreIdentity, error) // nil: not a leased namespace
	leaseID  atomic.Pointer[lease.StoreIdentity]
	segments []func(ctx context.Context) (segment.StoreIdentity, error)
	segIDs   []atomic.Pointer[segment.StoreIdentity]
}

// setLease records the lease store's identity reader; a store that cannot name
// its data reports none.
func (ids *identities) setLease(st lease.Store) {
	if id, ok := st.(lease.Identifier); ok {
		ids.lease = id.Identity
	}
}

// setSegments records the segment stores' identity readers, in their order.
func (ids *identities) setSegments(stores []segment.Store) {
	ids.segments = make([]func(context.Context) (segment.StoreIdentity, error), len(stores))
	ids.segIDs = make([]atomic.Pointer[segment.StoreIdentity], len(stores))
	for i, st := range stores {
		if id, ok := st.(segment.Identifier); ok {
			ids.segments[i] = id.Identity
		}
	}
}

// read asks the stores that have not answered yet for their identities, within
// ctx. It returns the errors of those that did not answer.
func (ids *identities) read(ctx context.Context) []error {
	var errs []error
	if ids.lease != nil && ids.leaseID.Load() == nil {
		if id, err := ids.lease(ctx); err != nil {
			errs = append(errs, err)
		} else {
			ids.leaseID.Store(&id)
		}
	}
	for i, f := range ids.segments {
		if f == nil || ids.segIDs[i].Load() != nil {
			continue
		}
		if id, err := f(ctx); err != nil {
			errs = append(errs, err)
		} else {
			ids.segIDs[i].Store(&id)
		}
	}
	return errs
}

// identityWarnings says which of the namespace's stores are private to this
// server; with operator, naming their URLs.
func (ns *namespace) identityWarnings(operator bool) []string {
	url := func(u string) string {
		if operator {
			return u
		}
		return "in its data directory"
	}
	var out []string
	if id := ns.ids.leaseID.Load(); id != nil && id.Private {
		out = append(out, fmt.Sprintf(privateWarning, "lease", url(ns.leaseURL), "lease"))
	}
	for i := range ns.ids.segIDs {
		if id := ns.ids.segIDs[i].Load(); id != nil && id.Private {
			out = append(out, fmt.Sprintf(privateWarning, "segment", url(ns.segURLs[i]), "segment"))
		}
	}
	return out
}

// digest is what info shows of a store's identity: a hash, equal for equal
// identities, that shows no host name, path or address to callers.
func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// readIdentities reads the namespace's store identities at start and logs a
// warning for each private store, and the error of each that does not answer
// (info asks again).
func (s *Server) readIdentities(ctx context.Context, ns *namespace) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	log := s.log.With("namespace", ns.name)
	for _, err := range ns.ids.read(cctx) {
		log.Warn("a store did not say which data it holds; clients given several servers will not mix this one with others until it does", "err", err)
	}
	for _, w := range ns.identityWarnings(true) {
		log.Warn(w)
	}
	if id := ns.ids.leaseID.Load(); id != nil {
		log.Debug("lease store identity", "id", id.ID, "digest", digest(id.ID), "private", id.Private)
	}
}

// identityInfo fills the identities and warnings of a namespace's info, asking
// the stores that have not answered yet (within a second).
func (s *Server) identityInfo(ctx context.Context, ns *namespace, ni *flurryv1.NamespaceInfo, operator bool) {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	ns.ids.read(cctx)
	cancel()
	if ni.Lease != nil {
		if id := ns.ids.leaseID.Load(); id != nil {
			ni.Lease.Identity = &flurryv1.StoreIdentity{Id: digest(id.ID), Private: id.Private}
		}
		ni.Lease.Leased, ni.Lease.FixedValue = ns.leased, ns.fixedValue
	}
	if ni.Segment != nil {
		n := ns.segModulus
		if n == 0 {
			n = int64(len(ns.ids.segIDs))
		}
		for i := range ns.ids.segIDs {
			st := &flurryv1.SegmentStore{Residue: int64(i), Modulus: n}
			if i < len(ns.segResidues) {
				st.Residue = ns.segResidues[i]
			}
			if id := ns.ids.segIDs[i].Load(); id != nil {
				st.Identity = &flurryv1.StoreIdentity{Id: digest(id.ID), Private: id.Private}
			}
			ni.Segment.StoreIdentities = append(ni.Segment.StoreIdentities, st)
		}
	}
	ni.Warnings = ns.identityWarnings(operator)
}
