package client

import (
	"strings"
	"testing"
	"time"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

func TestInfoConversion(t *testing.T) {
	m := &flurryv1.InfoResponse{Version: "v1", Started: "2026-01-02T03:04:05Z", Namespaces: []*flurryv1.NamespaceInfo{
		{Name: "s", Strategy: "segment", Ready: true, Issued: 7, Segment: &flurryv1.SegmentInfo{Tag: "s", CurrentFirst: 1, CurrentLast: 1000, RunwaySeconds: 1.5, Step: 1000}},
		{Name: "d", Strategy: "snowflake", Layout: &flurryv1.LayoutInfo{Text: "leaf", Epoch: "2010-11-04T01:42:54.657Z", LifeLeftSeconds: 60, Node: []*flurryv1.Field{{Name: "worker", Value: 3}}},
			Lease: &flurryv1.LeaseInfo{Value: 3, Mark: "2026-01-02T03:04:06.250Z", State: "held"}},
	}}
	got, err := info(m)
	if err != nil {
		t.Fatal(err)
	}
	s, d := got.Namespaces[0], got.Namespaces[1]
	if !got.Started.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || s.Segment.CurrentLast != 1000 || s.Segment.Runway != 1500*time.Millisecond ||
		s.Layout != nil || d.Layout.Epoch.UnixMilli() != 1288834974657 || d.Layout.LifeLeft != time.Minute || d.Layout.Node[0].Value != 3 ||
		d.Lease.Mark.Nanosecond() != 250e6 || !d.Layout.Lifetime.IsZero() {
		t.Errorf("converted %+v / %+v %+v / %+v %+v", got, s, s.Segment, d.Layout, d.Lease)
	}
	m.Namespaces[1].Lease.Mark = "yesterday"
	if _, err := info(m); err == nil || !strings.Contains(err.Error(), `malformed lease mark "yesterday"`) {
		t.Errorf("malformed time: %v", err)
	}
	dec := decoded(&flurryv1.DecodeResponse{Id: "9", Strategy: "segment", Sequence: 9})
	if !dec.Time.IsZero() || dec.Fields != nil || dec.Sequence != 9 {
		t.Errorf("segment decode %+v", dec)
	}
}
