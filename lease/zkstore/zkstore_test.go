package zkstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// open opens the test ZooKeeper under prefix.
func open(t *testing.T, prefix string) *Store {
	t.Helper()
	return openURL(t, testenv.ZooKeeper.URL(t), prefix)
}

func openURL(t *testing.T, rawURL, prefix string) *Store {
	t.Helper()
	o, err := ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if prefix != "" {
		o.Prefix = prefix
	}
	s, err := Open(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	u := testenv.ZooKeeper.URL(t)
	leasetest.Run(t, func(t *testing.T) lease.Store {
		o, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		o.Prefix = "flurry-test/lease"
		s, err := Open(testCtx(t), o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestNodes checks the node layout the package documentation promises: one
// persistent node per value under the scope's node, holding the holder and the
// mark, and kept with its mark after Release.
func TestNodes(t *testing.T) {
	s := open(t, "flurry-test/lease")
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 3, "me", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := "/flurry-test/lease/" + strings.ReplaceAll(scope, "/", "%2F") + "/0"
	data, st, err := s.conn.Get(ctx, p)
	var r record
	if err != nil || json.Unmarshal(data, &r) != nil || r.Owner != "me" || r.Token != l.Token || r.TTL != 2000 || st.EphemeralOwner != 0 {
		t.Fatalf("value node %s: %s %+v, %v", p, data, st, err)
	}
	if err := s.Release(ctx, l, 12345); err != nil {
		t.Fatal(err)
	}
	data, st, err = s.conn.Get(ctx, p)
	if err != nil || string(data) != `{"mark":12345,"epoch":1}` {
		t.Fatalf("value node after Release: %s, %v", data, err)
	}
	// A node of a flurry from before epochs has none: it counts from 0.
	if _, err := s.conn.Set(ctx, p, []byte(`{"mark":12345}`), st.Version); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.List(ctx, scope); err != nil || len(recs) != 1 || recs[0].Epoch != 0 || recs[0].Mark != 12345 {
		t.Fatalf("List of a node without an epoch = %+v, %v; want epoch 0", recs, err)
	}
	if l, err := s.AcquireValue(ctx, scope, 0, "me", 2*time.Second); err != nil || l.Epoch != 1 || l.Mark != 12345 {
		t.Fatalf("AcquireValue of a node without an epoch = %+v, %v; want epoch 1", l, err)
	}
}

// TestNestedScopes: scopes whose names nest ("a", "a/0", "a/b") are separate
// nodes, so one's values never show in another's.
func TestNestedScopes(t *testing.T) {
	s := open(t, "flurry-test/lease")
	ctx := testCtx(t)
	outer := leasetest.Scope(t)
	for _, sc := range []string{outer + "/0", outer + "/1/x", outer + "/.."} {
		if _, err := s.Acquire(ctx, sc, 1, "inner", 2*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range []string{".", ".."} {
		if _, err := s.AcquireValue(ctx, sc, 7, "dots", 2*time.Second); err != nil {
			t.Fatalf("scope %q: %v", sc, err)
		}
	}
	l, err := s.Acquire(ctx, outer, 8, "outer", 2*time.Second)
	if err != nil || l.Value != 0 {
		t.Fatalf("Acquire beside nested scopes = %+v, %v", l, err)
	}
	recs, err := s.List(ctx, outer)
	if err != nil || len(recs) != 1 || recs[0].Owner != "outer" {
		t.Fatalf("List = %+v, %v", recs, err)
	}
}

// TestRenewAfterExpiry: a lease that expired is lost, even when nobody took the
// value since: Renew and Release judge it by the leader's clock, as Acquire does.
func TestRenewAfterExpiry(t *testing.T) {
	s := open(t, "flurry-test/lease")
	ctx := testCtx(t)
	l, err := s.Acquire(ctx, leasetest.Scope(t), 1, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := s.Renew(ctx, l, time.Second, 10); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew of an expired lease: %v; want lease.ErrLost", err)
	}
	if err := s.Release(ctx, l, 10); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Release of an expired lease: %v; want lease.ErrLost", err)
	}
}

// TestLeaderChange: a lease last written under an earlier leader is judged from
// the first reading of the current leader's clock, never by comparing two
// leaders' clocks. The earlier leader's mtime is set far in the past, as a leader
// whose clock was behind would have written it: the lease stays live for its TTL
// from the current leader's first reading.
func TestLeaderChange(t *testing.T) {
	// A prefix of its own: the epoch node of a shared one keeps the first reading
	// of this leader, which may be from long before the test.
	s := open(t, fmt.Sprintf("flurry-test/lease-epoch/%d", time.Now().UnixNano()))
	ctx := testCtx(t)
	c, err := s.readClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 60_000
	earlier := node{rec: record{Token: "t", TTL: ttl}, stat: &zk.Stat{Mzxid: (c.epoch - 1) << 32, Mtime: c.now - 10*ttl}}
	live, exp, err := s.live(ctx, &c, earlier)
	if err != nil || !live || exp < c.now+ttl-5000 || c.start == 0 || c.start > c.now {
		t.Fatalf("a lease renewed under the previous leader, whose clock was 10 TTLs behind: live %v until %d (clock %+v), %v; want live about a TTL from the current leader's first reading", live, exp, c, err)
	}
	// The same node under the current leader: its own mtime counts.
	same := earlier
	same.stat = &zk.Stat{Mzxid: c.epoch << 32, Mtime: c.now - 10*ttl}
	if live, _, err := s.live(ctx, &c, same); err != nil || live {
		t.Fatalf("a lease written 10 TTLs ago by the current leader: live %v, %v", live, err)
	}
}

// TestClaimAtVersion: an acquirer that read an expired lease's node before its
// holder renewed it cannot take the value: the claim is written at the version
// read.
func TestClaimAtVersion(t *testing.T) {
	s := open(t, "flurry-test/lease")
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 1, "a", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := s.scan(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Renew(ctx, l, 5*time.Second, 10); err != nil {
		t.Fatal(err)
	}
	stale := candidate{value: 0, mark: nodes[0].rec.Mark, stat: nodes[0].stat}
	if _, err := s.claim(ctx, scope, stale, record{Owner: "b", Token: "b", TTL: 5000}.encode()); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("a claim at the version read before the holder renewed: %v; want zk.ErrBadVersion", err)
	}
	if _, err := s.Renew(ctx, l, 5*time.Second, 20); err != nil {
		t.Fatalf("the holder after the stale claim: %v", err)
	}
}

func TestPick(t *testing.T) {
	nodes := map[int64]node{
		0: {0, record{Mark: 5}, &zk.Stat{}}, 2: {2, record{Mark: 0}, &zk.Stat{}},
		3: {3, record{Mark: 1}, &zk.Stat{}}, 5: {5, record{Token: "held", Mark: 0}, &zk.Stat{}},
		9: {9, record{}, &zk.Stat{}},
	}
	free := func(n node) bool { return n.rec.Token == "" }
	var vs []int64
	for _, c := range pick(6, nodes, free, 8) {
		vs = append(vs, c.value)
	}
	// mark 0: values 1, 2 (a node), 4; then mark 1: 3; then mark 5: 0. 5 is held
	// and 9 outside the pool.
	if want := []int64{1, 2, 4, 3, 0}; !slices.Equal(vs, want) {
		t.Errorf("pick = %v; want %v", vs, want)
	}
}

func TestParseURL(t *testing.T) {
	o, err := ParseURL("zk://a:1,b/ids?request_timeout=2s")
	if err != nil || !slices.Equal(o.Servers, []string{"a:1", "b:2181"}) || o.Prefix != "ids" || o.RequestTimeout != 2*time.Second {
		t.Fatalf("ParseURL = %+v, %v", o, err)
	}
	if _, err := ParseURL("zk://ann:secret@a:1"); err == nil || !strings.HasPrefix(err.Error(), "lease/zkstore: ") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ParseURL with a password: %v", err)
	}
}

// TestOpenDeadServer: Open of a server that is not there fails after the URL's
// dial_timeout with the one line that names it.
func TestOpenDeadServer(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	o, err := ParseURL("zk://" + addr + "?dial_timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = Open(ctx, o)
	if err == nil || !strings.HasPrefix(err.Error(), "lease/zkstore: cannot reach ZooKeeper at "+addr+" within 300ms: ") {
		t.Fatalf("Open of a dead server: %v", err)
	}
}

// TestSession runs a lease session on the store: a generator issues, and its
// Close releases the value with the mark it issued up to.
func TestSession(t *testing.T) {
	s := open(t, "flurry-test/lease")
	scope := leasetest.Scope(t)
	ctx := testCtx(t)
	g, sess, err := lease.NewGenerator(ctx, snowflake.Options{Namespace: t.Name()}, lease.Options{Store: s, Scope: scope, TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	g.Close()
	recs, err := s.List(ctx, scope)
	if err != nil || len(recs) != 1 || recs[0].Held || recs[0].Mark == 0 {
		t.Fatalf("after the session's Close: %+v, %v", recs, err)
	}
}
