package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/layout"
)

var errInternal = errors.New("the server hit a bug; the request was not served (see the server's log)")

// nameList lists the namespaces anyone may use, for messages; those with tokens
// are left out. Empty when there is none.
func (s *Server) nameList() string {
	var names []string
	for _, ns := range s.order {
		if ns.tokens.empty() {
			names = append(names, ns.name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "namespaces " + strings.Join(names, ", ")
}

// decode splits id (its text form) per the namespace's strategy.
func (s *Server) decode(ns *namespace, text string) (*flurryv1.DecodeResponse, *apiError) {
	if ns.text != nil {
		res, err := ns.text.decodeID(text)
		if err != nil {
			return nil, errBadRequest("%s is not an ID of namespace %s (%s): %s", clipQ(text), ns.name, ns.strategy, oneLine(err.Error()))
		}
		res.Namespace, res.Strategy = ns.name, ns.strategy
		return res, nil
	}
	id, err := flurry.ParseID(text)
	if err != nil {
		return nil, errBadRequest("%s is not an ID of namespace %s: %s", clipQ(text), ns.name, strings.TrimPrefix(err.Error(), "flurry: "))
	}
	res := &flurryv1.DecodeResponse{Namespace: ns.name, Id: id.String(), Strategy: ns.strategy}
	if ns.layout == nil { // segment: a counter, in residue classes with several stores
		n := int64(len(ns.segStores))
		if n > 1 {
			res.Fields = []*flurryv1.Field{{Name: "store", Value: int64(id) % n}}
			res.Sequence = int64(id) / n
		} else {
			res.Sequence = int64(id)
		}
		return res, nil
	}
	d, err := ns.layout.Decode(id)
	if err != nil {
		return nil, errBadRequest("%s is not an ID of namespace %s: %s", clipQ(text), ns.name, oneLine(err.Error()))
	}
	res.Time = d.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	res.UnixMs = d.Time.UnixMilli()
	for _, nv := range d.Nodes {
		res.Fields = append(res.Fields, &flurryv1.Field{Name: nv.Name, Value: nv.Value})
	}
	res.Sequence = d.Sequence
	return res, nil
}

// clipQ quotes user input for a message, shortened.
func clipQ(s string) string { return strconv.Quote(clip(s)) }

// info describes the namespaces the caller may see (all, or one): those without
// tokens, those whose token it sent, all of them for an admin token. The others
// are left out, names included. Store addresses are shown only to operators: an
// admin token, or anyone on a server without tokens. A caller that may see no
// namespace on a server with tokens gets 401.
func (s *Server) info(ctx context.Context, only, auth string) (*flurryv1.InfoResponse, *apiError) {
	res := &flurryv1.InfoResponse{Version: s.opts.Version, Started: s.started.UTC().Format(time.RFC3339), Instance: s.instance}
	admin := s.isAdmin(auth)
	operator := admin || !s.protected
	var bkt *bucket
	worst := authMissing
	sees := func(ns *namespace) bool {
		if admin || ns.tokens.empty() {
			return true
		}
		r, b := ns.tokens.check(auth)
		if r == authOK {
			bkt = b
			return true
		}
		worst = r
		return false
	}
	if only != "" {
		ns := s.namespaces[only]
		if ns == nil {
			return nil, s.errNotFound(only)
		}
		if !sees(ns) {
			return nil, errToken("namespace "+ns.name, worst)
		}
		if e := s.spend(bkt); e != nil {
			return nil, e
		}
		res.Namespaces = append(res.Namespaces, s.nsInfo(ctx, ns, operator))
		return res, nil
	}
	for _, ns := range s.order {
		if sees(ns) {
			res.Namespaces = append(res.Namespaces, s.nsInfo(ctx, ns, operator))
		}
	}
	if len(res.Namespaces) == 0 && s.protected {
		if !s.admin.empty() && auth != "" && worst == authMissing {
			worst = authWrong
		}
		return nil, errToken("this server's namespaces", worst)
	}
	if e := s.spend(bkt); e != nil {
		return nil, e
	}
	if admin {
		_, b := s.admin.check(auth)
		if e := s.spend(b); e != nil {
			return nil, e
		}
	}
	return res, nil
}

// nsInfo describes one namespace; with operator, the stores' addresses too.
func (s *Server) nsInfo(ctx context.Context, ns *namespace, operator bool) *flurryv1.NamespaceInfo {
	ni := &flurryv1.NamespaceInfo{Name: ns.name, Strategy: ns.strategy, TokenRequired: !ns.tokens.empty()}
	ni.Ready, ni.NotReadyReason = s.ready(ctx, ns)
	ni.Issued = ns.issued.Load()
	now := time.Now()
	if l := ns.layout; l != nil {
		li := &flurryv1.LayoutInfo{
			Text: l.String(), Preset: l.Name(), Epoch: fmtMs(l.Epoch()), Lifetime: fmtMs(l.Lifetime()),
			LifeLeftSeconds: int64(l.Lifetime().Sub(now) / time.Second), IdsPerSecondPerNode: l.Rate(),
		}
		var node layout.NodeValues
		if ns.gen != nil {
			node = ns.gen.Node()
		} else if ns.ext != nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			node, _ = ns.ext.Node(cctx)
			cancel()
		}
		for i, f := range l.NodeFields() {
			li.Node = append(li.Node, &flurryv1.Field{Name: f.Name, Value: node[i]})
		}
		ni.Layout = li
	}
	if ns.sess != nil {
		st := ns.sess.Status()
		state := "held"
		switch {
		case !st.Held && st.Losses > 0:
			state = "lost"
		case !st.Held:
			state = "acquiring"
		}
		ni.Lease = &flurryv1.LeaseInfo{Scope: st.Scope, Value: st.Value, Owner: st.Owner, Mark: fmtMs(st.Mark), State: state}
		if operator {
			ni.Lease.Store = ns.leaseURL
		}
	}
	if ns.alloc != nil {
		st := ns.alloc.Stats()
		si := &flurryv1.SegmentInfo{
			Tag: st.Tag, CurrentFirst: int64(st.CurrentFirst), CurrentLast: int64(st.CurrentLast),
			Issued: st.Issued, NextReady: st.NextReady, Buffered: st.Buffered, Rate: st.Rate,
			RunwaySeconds: st.Runway.Seconds(), Step: st.Step, Fetches: st.Fetches,
		}
		if operator {
			si.Stores = ns.segURLs
		}
		if st.Err != nil {
			si.LastError = "the last fetch from the segment stores failed (the error is in the server's log)"
		}
		ni.Segment = si
	}
	s.identityInfo(ctx, ns, ni, operator)
	return ni
}

func fmtMs(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
