package client

import (
	"fmt"
	"time"

	"github.com/flurryid/flurry"
	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/layout"
)

// Decoded is an ID that a server took apart (Client.Decode).
type Decoded struct {
	// Namespace is the namespace asked for, and Strategy its strategy: snowflake,
	// segment, redis, uuidv7 or objectid.
	Namespace, Strategy string
	// ID is the ID as the server writes it: decimal, or the text form of a uuidv7 or
	// objectid ID.
	ID string
	// Time is when the ID was made, to the millisecond, in UTC. It is zero for
	// segment IDs, which carry no time.
	Time time.Time
	// Fields are the node fields by name, in layout order (datacenter, worker, ...);
	// "random" for an objectid (its 5-byte process value); "store" (the residue
	// class) in a segment namespace with several stores.
	Fields []layout.NamedValue
	// Sequence is the sequence field (snowflake, redis), the counter (objectid;
	// segment, divided by the number of stores), or zero (uuidv7).
	Sequence int64
}

// Info describes a server and the namespaces the caller may see (Client.Info).
type Info struct {
	// Version is the server's version, and Started when it started.
	Version string
	Started time.Time
	// Namespaces are in the order of the server's configuration.
	Namespaces []NamespaceInfo
}

// NamespaceInfo describes one namespace of a server.
type NamespaceInfo struct {
	// Name is the namespace's name; Strategy is snowflake, segment, redis, uuidv7 or
	// objectid.
	Name, Strategy string
	// Ready reports whether the namespace can issue now (what /readyz checks), and
	// NotReadyReason why not, in one line.
	Ready          bool
	NotReadyReason string
	// Issued counts the IDs issued since the server started.
	Issued int64
	// TokenRequired reports whether the namespace asks for a token.
	TokenRequired bool
	// Layout describes the IDs of a snowflake or redis namespace; nil for others.
	Layout *LayoutInfo
	// Lease describes the lease of a snowflake namespace's node value; nil for others.
	Lease *LeaseInfo
	// Segment describes the buffers of a segment namespace; nil for others.
	Segment *SegmentInfo
}

// LayoutInfo describes the layout of a namespace's IDs.
type LayoutInfo struct {
	// Text is the layout's text form, which layout.Parse reads, and Preset the
	// preset's name if it is one.
	Text, Preset string
	// Epoch is where the time field starts and Lifetime when it runs out.
	Epoch, Lifetime time.Time
	// LifeLeft is the time left until Lifetime when the server answered.
	LifeLeft time.Duration
	// RatePerNode is the most IDs one node value can issue per second.
	RatePerNode float64
	// Node is the node value the namespace issues with, by field.
	Node []layout.NamedValue
}

// LeaseInfo describes the lease a snowflake namespace takes its node value from.
type LeaseInfo struct {
	// Store is the lease store's URL with its password redacted, shown only to
	// operators (an admin token, or any caller of a server without tokens); Scope
	// is the pool of node values.
	Store, Scope string
	// Value is the leased node value, and Owner the holder's name.
	Value int64
	Owner string
	// Mark is the high-water mark: the end of the time reserved in the store.
	Mark time.Time
	// State is held, lost, acquiring or static.
	State string
}

// SegmentInfo describes the buffers of a segment namespace.
type SegmentInfo struct {
	// Tag is the tag served, and Stores the stores' URLs with passwords redacted
	// (shown only to operators, as LeaseInfo.Store).
	Tag    string
	Stores []string
	// CurrentFirst and CurrentLast are the first and last ID of the range being
	// served, and Issued how many of its IDs are handed out.
	CurrentFirst, CurrentLast flurry.ID
	Issued                    int64
	// NextReady reports whether the next range is buffered, and Buffered how many
	// IDs can be served without any store.
	NextReady bool
	Buffered  int64
	// Rate is the recent rate in IDs per second, and Runway how long Buffered lasts
	// at that rate (both zero while unknown).
	Rate   float64
	Runway time.Duration
	// Step is the size the next fresh range is asked with, and Fetches counts the
	// ranges taken.
	Step, Fetches int64
	// LastError is set when the last fetch from the stores failed.
	LastError string
}

// decoded converts a server's DecodeResponse.
func decoded(m *flurryv1.DecodeResponse) Decoded {
	d := Decoded{Namespace: m.Namespace, Strategy: m.Strategy, ID: m.Id, Fields: namedValues(m.Fields), Sequence: m.Sequence}
	if m.Time != "" {
		d.Time = time.UnixMilli(m.UnixMs).UTC()
	}
	return d
}

// info converts a server's InfoResponse. A time that is not RFC 3339 is an error:
// the server writes every time so.
func info(m *flurryv1.InfoResponse) (Info, error) {
	var firstErr error
	at := func(what, s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("client: the server's info holds a malformed %s %q", what, s)
		}
		return t.UTC()
	}
	out := Info{Version: m.Version, Started: at("start time", m.Started)}
	for _, n := range m.Namespaces {
		ni := NamespaceInfo{Name: n.Name, Strategy: n.Strategy, Ready: n.Ready, NotReadyReason: n.NotReadyReason,
			Issued: n.Issued, TokenRequired: n.TokenRequired}
		if l := n.Layout; l != nil {
			ni.Layout = &LayoutInfo{Text: l.Text, Preset: l.Preset, Epoch: at("epoch", l.Epoch), Lifetime: at("lifetime", l.Lifetime),
				LifeLeft: time.Duration(l.LifeLeftSeconds) * time.Second, RatePerNode: l.IdsPerSecondPerNode, Node: namedValues(l.Node)}
		}
		if l := n.Lease; l != nil {
			ni.Lease = &LeaseInfo{Store: l.Store, Scope: l.Scope, Value: l.Value, Owner: l.Owner, Mark: at("lease mark", l.Mark), State: l.State}
		}
		if s := n.Segment; s != nil {
			ni.Segment = &SegmentInfo{Tag: s.Tag, Stores: s.Stores, CurrentFirst: flurry.ID(s.CurrentFirst), CurrentLast: flurry.ID(s.CurrentLast),
				Issued: s.Issued, NextReady: s.NextReady, Buffered: s.Buffered, Rate: s.Rate,
				Runway: time.Duration(s.RunwaySeconds * float64(time.Second)), Step: s.Step, Fetches: s.Fetches, LastError: s.LastError}
		}
		out.Namespaces = append(out.Namespaces, ni)
	}
	if firstErr != nil {
		return Info{}, firstErr
	}
	return out, nil
}

func namedValues(fs []*flurryv1.Field) []layout.NamedValue {
	if len(fs) == 0 {
		return nil
	}
	out := make([]layout.NamedValue, len(fs))
	for i, f := range fs {
		out[i] = layout.NamedValue{Name: f.Name, Value: f.Value}
	}
	return out
}
