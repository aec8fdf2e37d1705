package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
)

// snow describes a snowflake namespace "default" whose worker field is leased from
// store (private or shared), with datacenter fixed at dc.
func snow(store string, private bool, scope string, dc int64) *flurryv1.NamespaceInfo {
	return &flurryv1.NamespaceInfo{Name: "default", Strategy: "snowflake",
		Layout: &flurryv1.LayoutInfo{Text: "time:41:1ms:2025-01-01T00:00:00Z,datacenter:2,worker:4,seq:16",
			Node: []*flurryv1.Field{{Name: "datacenter", Value: dc}, {Name: "worker", Value: 0}}},
		Lease: &flurryv1.LeaseInfo{Scope: scope, Leased: []string{"worker"}, Identity: &flurryv1.StoreIdentity{Id: store, Private: private}}}
}

// fixedValue makes ni's leased value v, fixed by configuration.
func fixedValue(ni *flurryv1.NamespaceInfo, v int64) *flurryv1.NamespaceInfo {
	ni.Lease.Value, ni.Lease.FixedValue = v, true
	return ni
}

// seg describes a segment namespace "segment" on stores, residue class i mod len.
func seg(private bool, stores ...string) *flurryv1.NamespaceInfo {
	si := &flurryv1.SegmentInfo{}
	for i, s := range stores {
		si.StoreIdentities = append(si.StoreIdentities, &flurryv1.SegmentStore{
			Identity: &flurryv1.StoreIdentity{Id: s, Private: private}, Residue: int64(i), Modulus: int64(len(stores))})
	}
	return &flurryv1.NamespaceInfo{Name: "segment", Strategy: "segment", Segment: si}
}

// TestCollide holds the rules of which two servers' namespaces can issue the
// same IDs.
func TestCollide(t *testing.T) {
	otherLayout := snow("pg", false, "s", 0)
	otherLayout.Layout.Text = "time:41:1ms:2025-01-01T00:00:00Z,datacenter:2,worker:5,seq:15"
	older := snow("", false, "s", 0)
	older.Lease.Identity, older.Lease.Leased = nil, nil
	for _, c := range []struct {
		name string
		a, b *flurryv1.NamespaceInfo
		want string // a part of the reason; "" when they cannot collide
	}{
		{"two private stores", snow("f1", true, "s", 0), snow("f2", true, "s", 0), "only it can use"},
		{"one private store on one machine", snow("f1", true, "s", 0), snow("f1", true, "s", 0), ""},
		{"private stores, fixed datacenters differ", snow("f1", true, "s", 0), snow("f2", true, "s", 1), ""},
		{"private stores, lease.fixed values differ", fixedValue(snow("f1", true, "s", 0), 1), fixedValue(snow("f2", true, "s", 0), 2), ""},
		{"private stores, lease.fixed values equal", fixedValue(snow("f1", true, "s", 0), 1), fixedValue(snow("f2", true, "s", 0), 1), "only it can use"},
		{"one shared store", snow("pg", false, "s", 0), snow("pg", false, "s", 0), ""},
		{"two shared stores", snow("pg", false, "s", 0), snow("etcd", false, "s", 0), "different stores"},
		{"a private and a shared store", snow("f1", true, "s", 0), snow("pg", false, "s", 0), "different stores"},
		{"one store, two scopes", snow("pg", false, "s", 0), snow("pg", false, "t", 0), "different scopes"},
		{"two layouts", snow("pg", false, "s", 0), otherLayout, "layouts differ"},
		{"a server from before identities", older, snow("f2", true, "s", 0), ""},
		{"snowflake and segment", snow("pg", false, "s", 0), &flurryv1.NamespaceInfo{Name: "default", Strategy: "segment"}, "as snowflake, the other as segment"},
		{"uuidv7", &flurryv1.NamespaceInfo{Strategy: "uuidv7"}, &flurryv1.NamespaceInfo{Strategy: "uuidv7"}, ""},
		{"two private segment stores", seg(true, "f1"), seg(true, "f2"), "1, 2, 3"},
		{"one shared segment store", seg(false, "pg"), seg(false, "pg"), ""},
		{"residue classes of other stores", seg(false, "pg", "my"), seg(false, "pg", "redis"), "residue class 1 mod 2"},
		{"other numbers of stores", seg(false, "pg", "my"), seg(false, "pg"), "2 and 1 segment stores"},
	} {
		got := collide(c.a, c.b)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: collide = %q, want %q", c.name, got, c.want)
		}
		if back := collide(c.b, c.a); (back == "") != (got == "") {
			t.Errorf("%s: collide is not symmetric: %q and %q", c.name, got, back)
		}
	}
}

// infoService answers Next with increasing IDs, and Info with info once ready
// is set (UNAVAILABLE before).
type infoService struct {
	flurryv1connect.UnimplementedIDServiceHandler
	info     *flurryv1.NamespaceInfo
	instance string
	ready    atomic.Bool
	nextDown atomic.Bool // Next answers UNAVAILABLE
	nexts    atomic.Int64
	next     atomic.Int64
}

func (s *infoService) Info(ctx context.Context, req *connect.Request[flurryv1.InfoRequest]) (*connect.Response[flurryv1.InfoResponse], error) {
	if !s.ready.Load() {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("not yet"))
	}
	return connect.NewResponse(&flurryv1.InfoResponse{Instance: s.instance, Namespaces: []*flurryv1.NamespaceInfo{s.info}}), nil
}

func (s *infoService) Next(ctx context.Context, req *connect.Request[flurryv1.NextRequest]) (*connect.Response[flurryv1.NextResponse], error) {
	s.nexts.Add(1)
	if s.nextDown.Load() {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("down"))
	}
	ids := make([]int64, req.Msg.Count)
	for i := range ids {
		ids[i] = s.next.Add(1)
	}
	return connect.NewResponse(&flurryv1.NextResponse{Ids: ids}), nil
}

func startInfoService(t *testing.T, s *infoService) string {
	mux := http.NewServeMux()
	mux.Handle(flurryv1connect.NewIDServiceHandler(s))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestMixWaitsForInfo: a server whose info does not answer is never asked for
// IDs; once it answers, and collides with the server in use, the namespace is
// refused. Two addresses of one server (one instance) are not a mix.
func TestMixWaitsForInfo(t *testing.T) {
	a := &infoService{info: snow("f1", true, "default", 0), instance: "a"}
	b := &infoService{info: snow("f2", true, "default", 0), instance: "b"}
	a.ready.Store(true)
	ua, ub := startInfoService(t, a), startInfoService(t, b)
	c, err := New(Options{Servers: []string{ua, ub}, Batch: 10, Timeout: time.Second, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, NoHedge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Next(ctx, "default"); err != nil {
		t.Fatalf("a alone: %v", err)
	}
	// a goes down: b is the only one left, and has not described the namespace.
	a.nextDown.Store(true)
	for range 3 {
		if _, _, err := c.Fetch(ctx, "default", 5); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("with b silent: %v, want ErrUnavailable", err)
		}
	}
	if n := b.nexts.Load(); n != 0 {
		t.Fatalf("b was asked for IDs %d times before it described the namespace", n)
	}
	b.ready.Store(true)
	_, _, err = c.Fetch(ctx, "default", 5)
	if me, ok := errors.AsType[*MixError](err); !ok || me.First != ua || me.Second != ub {
		t.Fatalf("once b answers: %v, want a *MixError of %s and %s", err, ua, ub)
	}
	if n := b.nexts.Load(); n != 0 {
		t.Fatalf("b was asked for IDs %d times", n)
	}

	// One server at two addresses: its instance is the same.
	c2, err := New(Options{Servers: []string{ua, strings.Replace(ua, "127.0.0.1", "localhost", 1)}, Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	a.nextDown.Store(false)
	if _, err := c2.Next(ctx, "default"); err != nil {
		t.Fatalf("one server at two addresses: %v", err)
	}
}
