package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

// ErrMixed is matched by the *MixError that Next, NextText and Fetch return when
// two of the servers can issue the same IDs of the namespace.
var ErrMixed = errors.New("client: servers that can issue the same IDs")

// MixError is returned, for a namespace, when two of the client's servers can
// issue the same IDs of it: each leases its node value from a store of its own
// (two servers left on the embedded default, each with its own data directory),
// from two different stores, or with different layouts. The client compares the
// servers' info (namespace, layout, node fields, store identities) before it
// takes the IDs of a server for the first time, and refuses the namespace from
// then on rather than hand out duplicates. It matches ErrMixed with [errors.Is].
type MixError struct {
	Namespace string
	// First and Second are the two servers' URLs.
	First, Second string
	// Reason says why their IDs can collide.
	Reason string
}

// Error names both servers, why their IDs can collide, and what to do.
func (e *MixError) Error() string {
	return fmt.Sprintf("client: servers %s and %s can issue the same IDs of namespace %q, so the client uses neither for it: %s; give the servers one shared store (or distinct fixed node values), or give the client only servers that share one",
		e.First, e.Second, e.Namespace, e.Reason)
}

// Is reports whether target is ErrMixed.
func (e *MixError) Is(target error) bool { return target == ErrMixed }

// mixGrace is how long the first use of a namespace waits, once the server asked
// described it, for the other servers' descriptions, so that a mix of two running
// servers is refused at once rather than after the first server's IDs.
const mixGrace = 200 * time.Millisecond

// mixCheck holds what the servers said of one namespace. A server's IDs are taken
// only once it described the namespace and agreed with every server that did.
type mixCheck struct {
	c  *Client
	ns string

	mu       sync.Mutex
	started  bool
	answered []bool
	infos    []*flurryv1.NamespaceInfo // nil when the server gave nothing to compare
	insts    []string                  // the servers' instances
	fetching []chan struct{}           // closed when the server's info call ends; nil: none running
	lastErr  []error                   // why the last info call failed
	err      *MixError
}

// mixFor returns the namespace's check, made on first use.
func (c *Client) mixFor(ns string) *mixCheck {
	c.mixMu.Lock()
	defer c.mixMu.Unlock()
	m := c.mixes[ns]
	if m == nil {
		n := len(c.servers)
		m = &mixCheck{c: c, ns: ns, answered: make([]bool, n), infos: make([]*flurryv1.NamespaceInfo, n),
			insts: make([]string, n), fetching: make([]chan struct{}, n), lastErr: make([]error, n)}
		if c.mixes == nil {
			c.mixes = map[string]*mixCheck{}
		}
		c.mixes[ns] = m
	}
	return m
}

// vet returns nil when server i's IDs of namespace may be taken: it described the
// namespace and agrees with every other server that did. The first call of a
// namespace asks every server at once; later ones cost a map lookup, or one info
// call for a server that has not answered yet.
func (c *Client) vet(ctx context.Context, namespace string, i int) error {
	if len(c.servers) < 2 {
		return nil
	}
	m := c.mixFor(namespace)
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return m.err
	}
	if m.answered[i] {
		m.mu.Unlock()
		return nil
	}
	first := !m.started
	if first {
		m.started = true
		for k := range c.servers {
			m.fetch(k)
		}
	} else {
		m.fetch(i)
	}
	mine := m.fetching[i]
	all := slices.Clone(m.fetching)
	m.mu.Unlock()

	select {
	case <-mine:
	case <-ctx.Done():
		return ctx.Err()
	}
	if first {
		t := time.NewTimer(mixGrace)
		defer t.Stop()
	wait:
		for _, ch := range all {
			select {
			case <-ch:
			case <-t.C:
				break wait
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.err != nil:
		return m.err
	case m.answered[i]:
		return nil
	}
	return fmt.Errorf("its info did not answer, so its IDs are not used until it can be compared with the other servers': %w", m.lastErr[i])
}

// fetch starts an info call to server k unless one runs. m.mu is held.
func (m *mixCheck) fetch(k int) {
	if m.fetching[k] != nil || m.answered[k] {
		return
	}
	done := make(chan struct{})
	m.fetching[k] = done
	s := m.c.servers[k]
	// Not in c.wg: it ends by itself, at the latest when Close cancels c.ctx.
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(m.c.ctx, m.c.timeout)
		defer cancel()
		req := connect.NewRequest(&flurryv1.InfoRequest{Namespace: m.ns})
		m.c.auth(req.Header(), m.ns)
		resp, err := s.rpc.Info(ctx, req)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.fetching[k] = nil
		var ni *flurryv1.NamespaceInfo
		switch {
		case err == nil:
			for _, n := range resp.Msg.Namespaces {
				if n.Name == m.ns {
					ni = n
				}
			}
			if ni != nil && !described(ni) {
				m.lastErr[k] = errors.New("the server has not read its stores' identities yet")
				return
			}
			m.insts[k] = resp.Msg.Instance
		case nothingToCompare(err):
			// A server without the info call, or without the namespace (or
			// closed to this token): Next gets the same answer, and fails
			// there, so nothing of it can be mixed.
		default:
			m.lastErr[k] = err
			return
		}
		m.answered[k], m.infos[k] = true, ni
		if m.err != nil {
			return
		}
		for j := range m.infos {
			if j == k || !m.answered[j] || (m.insts[j] != "" && m.insts[j] == m.insts[k]) {
				continue
			}
			if why := collide(m.infos[j], ni); why != "" {
				a, b := min(j, k), max(j, k)
				m.err = &MixError{Namespace: m.ns, First: m.c.servers[a].url, Second: m.c.servers[b].url, Reason: why}
				return
			}
		}
	}()
}

// nothingToCompare reports whether an info call's error means that the server
// has nothing of the namespace to compare: it predates the info call, or does not
// serve the namespace to this caller.
func nothingToCompare(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeUnimplemented, connect.CodeNotFound, connect.CodeUnauthenticated, connect.CodePermissionDenied:
		return true
	}
	return false
}

// described reports whether a server's info names every store the namespace
// uses. A server from before store identities names none (nothing to compare);
// one whose store has not answered yet leaves that store's identity out.
func described(ni *flurryv1.NamespaceInfo) bool {
	if l := ni.Lease; l != nil && len(l.Leased) > 0 && l.Identity == nil {
		return false
	}
	if s := ni.Segment; s != nil {
		for _, st := range s.StoreIdentities {
			if st.Identity == nil {
				return false
			}
		}
	}
	return true
}

// collide returns why two servers' namespaces can issue the same IDs, or "" when
// they cannot (or nothing tells: a server that does not say).
func collide(a, b *flurryv1.NamespaceInfo) string {
	if a == nil || b == nil {
		return ""
	}
	text := func(s string) bool { return s == "uuidv7" || s == "objectid" }
	switch {
	case text(a.Strategy) && text(b.Strategy):
		return "" // random bits: nothing to coordinate
	case a.Strategy != b.Strategy:
		return fmt.Sprintf("one serves it as %s, the other as %s, and their IDs overlap", a.Strategy, b.Strategy)
	case a.Strategy == "segment":
		return collideSegments(a.Segment, b.Segment)
	case a.Layout == nil || b.Layout == nil || a.Lease == nil || b.Lease == nil:
		return ""
	}
	if a.Layout.Text != b.Layout.Text {
		return fmt.Sprintf("their layouts differ (%s and %s), so their IDs can collide", a.Layout.Text, b.Layout.Text)
	}
	la, lb := a.Lease, b.Lease
	if la.Identity == nil || lb.Identity == nil {
		return "" // a server from before store identities: nothing tells
	}
	// Node fields fixed by configuration on both with different values keep
	// the two apart whatever their leases.
	for k, f := range a.Layout.Node {
		if k < len(b.Layout.Node) && !slices.Contains(la.Leased, f.Name) && !slices.Contains(lb.Leased, f.Name) && f.Value != b.Layout.Node[k].Value {
			return ""
		}
	}
	// Two values fixed by configuration (lease.fixed) that differ keep them
	// apart too: each server leases its own value or none.
	if la.FixedValue && lb.FixedValue && la.Value != lb.Value && slices.Equal(la.Leased, lb.Leased) {
		return ""
	}
	ia, ib := la.Identity, lb.Identity
	switch {
	case ia.Id != ib.Id && ia.Private && ib.Private:
		return fmt.Sprintf("each leases its node value from a store only it can use (%s and %s), so both can take the same value", ia.Id, ib.Id)
	case ia.Id != ib.Id:
		return fmt.Sprintf("they lease their node values from different stores (%s and %s), so both can take the same value", ia.Id, ib.Id)
	case la.Scope != lb.Scope:
		return fmt.Sprintf("they lease from one store but in different scopes (%s and %s), whose values may be equal", la.Scope, lb.Scope)
	case !slices.Equal(la.Leased, lb.Leased):
		return fmt.Sprintf("they lease different node fields (%s and %s)", strings.Join(la.Leased, ","), strings.Join(lb.Leased, ","))
	}
	return ""
}

// collideSegments returns why two segment namespaces can hand out the same IDs:
// unless they take them from the same shared stores, in the same residue
// classes, they can.
func collideSegments(a, b *flurryv1.SegmentInfo) string {
	if a == nil || b == nil || len(a.StoreIdentities) == 0 || len(b.StoreIdentities) == 0 {
		return ""
	}
	// Residue classes of one modulus that no store of the other serves (two
	// regions' stores, docs/multi-region.md) never yield one ID, whatever the
	// stores.
	if disjointClasses(a.StoreIdentities, b.StoreIdentities) {
		return ""
	}
	for _, st := range a.StoreIdentities {
		if st.Identity.GetPrivate() {
			for _, o := range b.StoreIdentities {
				if o.Identity.GetId() != st.Identity.GetId() {
					return fmt.Sprintf("each hands out the counters of a store only it can use (%s and %s), so both hand out 1, 2, 3, ...", st.Identity.GetId(), o.Identity.GetId())
				}
			}
		}
	}
	if len(a.StoreIdentities) != len(b.StoreIdentities) {
		return fmt.Sprintf("they use %d and %d segment stores, so their residue classes overlap", len(a.StoreIdentities), len(b.StoreIdentities))
	}
	for k, st := range a.StoreIdentities {
		o := b.StoreIdentities[k]
		if st.Identity.GetId() != o.Identity.GetId() || st.Residue != o.Residue || st.Modulus != o.Modulus {
			return fmt.Sprintf("residue class %d mod %d comes from different stores (%s and %s)", st.Residue, st.Modulus, st.Identity.GetId(), o.Identity.GetId())
		}
	}
	return ""
}

// disjointClasses reports whether two lists of segment stores have one modulus
// and no residue in common.
func disjointClasses(a, b []*flurryv1.SegmentStore) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Modulus != y.Modulus || x.Modulus == 0 || x.Residue == y.Residue {
				return false
			}
		}
	}
	return true
}
