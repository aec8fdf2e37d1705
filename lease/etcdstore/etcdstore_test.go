package etcdstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func open(t *testing.T, rawURL string, opts Options) *Store {
	t.Helper()
	s, err := openURL(testCtx(t), rawURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	u := testenv.Etcd.URL(t)
	leasetest.Run(t, func(t *testing.T) lease.Store {
		s, err := openURL(testCtx(t), u, Options{Prefix: "flurry-test"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		endpoints []string
		user      string
		dial      time.Duration
		want      Options // without Client
		err       string  // part of the error; "" for none
	}{
		{name: "plain", url: "etcd://127.0.0.1:2379", endpoints: []string{"http://127.0.0.1:2379"}, dial: 5 * time.Second},
		{name: "several and prefix", url: "etcd://a:1,b:2/ids/lease?dial_timeout=2s", endpoints: []string{"http://a:1", "http://b:2"},
			dial: 2 * time.Second, want: Options{Prefix: "ids/lease"}},
		{name: "absolute prefix", url: "etcd://a:1//ids", endpoints: []string{"http://a:1"}, dial: 5 * time.Second, want: Options{Prefix: "/ids"}},
		{name: "empty prefix", url: "etcd://a:1/", endpoints: []string{"http://a:1"}, dial: 5 * time.Second},
		{name: "user", url: "etcd://ann:secret@a:1", endpoints: []string{"http://a:1"}, user: "ann", dial: 5 * time.Second},
		{name: "bad scheme", url: "http://a:1", err: "scheme"},
		{name: "no host", url: "etcd:///x", err: "endpoints"},
		{name: "no port", url: "etcd://a", err: "host:port"},
		{name: "bad second endpoint", url: "etcd://a:1,b", err: "port"},
		{name: "empty endpoint", url: "etcd://a:1,,b:2", err: "host 2 of the URL's host list: empty"},
		{name: "unknown key", url: "etcd://a:1?ttl=5s", err: "unknown key ttl"},
		{name: "bad dial timeout", url: "etcd://a:1?dial_timeout=soon", err: "dial_timeout"},
		{name: "dial timeout twice", url: "etcd://a:1?dial_timeout=1s&dial_timeout=2s", err: "2 times"},
		{name: "password redacted", url: "etcd://ann:secret@a:1?nope=1", err: "ann:xxxxx@a:1"},
		{name: "password redacted, bad port", url: "etcd://ann:secret@a:x", err: "port must be a number"},
		{name: "ipv6 list and request timeout", url: "etcd://[::1]:2379,[::1]:2380/p?request_timeout=2s", endpoints: []string{"http://[::1]:2379", "http://[::1]:2380"},
			dial: 5 * time.Second, want: Options{Prefix: "p", RequestTimeout: 2 * time.Second}},
		{name: "bad request timeout", url: "etcd://a:1?request_timeout=0s", err: "request_timeout"},
		{name: "password redacted, bad scheme", url: "redis://ann:secret@a:1", err: "scheme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseURL(tc.url)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "lease/etcdstore: ") {
					t.Fatalf("ParseURL(%q) error = %v; want one with %q", tc.url, err, tc.err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tc.url, err)
			}
			cfg := o.Client
			if !slices.Equal(cfg.Endpoints, tc.endpoints) || cfg.Username != tc.user || cfg.DialTimeout != tc.dial {
				t.Errorf("config endpoints %q user %q dial %v", cfg.Endpoints, cfg.Username, cfg.DialTimeout)
			}
			if o.Prefix != tc.want.Prefix || o.RequestTimeout != tc.want.RequestTimeout {
				t.Errorf("options %+v; want %+v", o, tc.want)
			}
		})
	}
}

// TestOpenDeadServer: Open of a server that is not there fails after the URL's
// dial_timeout, with an error that names the package and not the password. It
// must not wait for the caller's context to end (it is far longer).
func TestOpenDeadServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := openURL(ctx, "etcd://ann:secret@127.0.0.1:1?dial_timeout=300ms", Options{})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "lease/etcdstore: ") {
		t.Errorf("Open of a dead server: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("Open of a dead server waited for its context to end, not for dial_timeout")
	}
}

// TestKeys checks the key layout the package documentation promises: the held key
// has the etcd lease, the mark key has none and outlives the lease.
func TestKeys(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test/"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 3, "me", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := leaseID(l.Token)
	r, err := s.cli.Get(ctx, "flurry-test/"+scope+"/held/0")
	if err != nil || len(r.Kvs) != 1 || r.Kvs[0].Lease != int64(id) || !strings.Contains(string(r.Kvs[0].Value), `"owner":"me"`) {
		t.Fatalf("held key %v, %v", r.Kvs, err)
	}
	if err := s.Release(ctx, l, 12345); err != nil {
		t.Fatal(err)
	}
	r, err = s.cli.Get(ctx, "flurry-test/"+scope+"/mark/0")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "12345 1" || r.Kvs[0].Lease != 0 {
		t.Fatalf("mark key %v, %v", r.Kvs, err)
	}
	if ttl, err := s.cli.TimeToLive(ctx, id); err != nil || ttl.TTL > 0 {
		t.Errorf("the etcd lease outlived Release: %+v, %v", ttl, err)
	}
}

// TestNestedScopes: a scope's reads see the keys of scopes below it, and ignore them.
func TestNestedScopes(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	outer := leasetest.Scope(t)
	for _, sc := range []string{outer + "/held", outer + "/held/0", outer + "/mark/7"} {
		if _, err := s.Acquire(ctx, sc, 1, "inner", 2*time.Second); err != nil {
			t.Fatal(err)
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

// TestLongerTTL: etcd renews for the granted TTL, so a longer ttl moves the value
// to a new etcd lease with a new token.
func TestLongerTTL(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 1, "a", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := s.Renew(ctx, l, 1500*time.Millisecond, 10) // 2s granted already covers it
	if err != nil || l2.Token != l.Token {
		t.Fatalf("Renew with a shorter ttl = %+v, %v", l2, err)
	}
	before := time.Now()
	l3, err := s.Renew(ctx, l2, 30*time.Second, 20)
	if err != nil || l3.Token == l.Token || l3.Mark != 20 || l3.Expires.Before(before.Add(29*time.Second)) {
		t.Fatalf("Renew with a longer ttl = %+v, %v", l3, err)
	}
	if _, err := s.Renew(ctx, l2, 2*time.Second, 30); !errors.Is(err, lease.ErrLost) {
		t.Errorf("the old token still renews: %v", err)
	}
	oldID, _ := leaseID(l.Token)
	if ttl, err := s.cli.TimeToLive(ctx, oldID); err != nil || ttl.TTL > 0 {
		t.Errorf("the old etcd lease was not revoked: %+v, %v", ttl, err)
	}
	if err := s.Release(ctx, l3, 40); err != nil {
		t.Fatal(err)
	}
	l4, err := s.Acquire(ctx, scope, 1, "b", 2*time.Second)
	if err != nil || l4.Mark != 40 {
		t.Fatalf("after release = %+v, %v", l4, err)
	}
}

// TestOldMarkKey: a mark key written by a flurry from before epochs holds the mark
// alone; it reads as epoch 0, and the next write adds the epoch.
func TestOldMarkKey(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	mk := "flurry-test/" + scope + "/mark/0"
	if _, err := s.cli.Put(ctx, mk, "777"); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List(ctx, scope)
	if err != nil || len(recs) != 1 || recs[0].Mark != 777 || recs[0].Epoch != 0 {
		t.Fatalf("List of an old mark key = %+v, %v; want mark 777, epoch 0", recs, err)
	}
	l, err := s.AcquireValue(ctx, scope, 0, "me", 2*time.Second)
	if err != nil || l.Mark != 777 || l.Epoch != 1 {
		t.Fatalf("AcquireValue over an old mark key = %+v, %v; want mark 777, epoch 1", l, err)
	}
	if l, err = s.Renew(ctx, l, 2*time.Second, 800); err != nil || l.Epoch != 2 {
		t.Fatalf("Renew = %+v, %v; want epoch 2", l, err)
	}
	if err := s.Release(ctx, l, 790); err != nil {
		t.Fatal(err)
	}
	r, err := s.cli.Get(ctx, mk)
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "790 2" {
		t.Fatalf("mark key after release %v, %v; want \"790 2\"", r.Kvs, err)
	}
	if _, err := s.cli.Put(ctx, mk, "790 x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, scope); err == nil || !strings.Contains(err.Error(), "not a mark and an epoch") {
		t.Errorf("List of a foreign mark key: %v; want an error naming it", err)
	}
}

func TestPick(t *testing.T) {
	marks := map[int64]markKV{0: {mark: 5, rev: 1}, 2: {rev: 2}, 3: {mark: 1, rev: 3}, 9: {rev: 4}}
	got := pick(6, nil, marks, 8)
	var vs []int64
	for _, c := range got {
		vs = append(vs, c.value)
	}
	// mark 0: values 1, 2 (recorded), 4, 5; then mark 1: 3; then mark 5: 0. 9 is outside the pool.
	if want := []int64{1, 2, 4, 5, 3, 0}; !slices.Equal(vs, want) {
		t.Errorf("pick = %v; want %v", vs, want)
	}
}

// etcd refuses a lease TTL above 9e9 s ("too large lease TTL"): retrying cannot
// cure that, so the store's error matches lease.ErrBadConfig and a session stops at
// once instead of retrying forever. The bound in leasestore.CheckTTL refuses such a TTL
// first; the store's own acquire path is called here to reach etcd's refusal.
func TestTooLargeTTLIsBadConfig(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	scope := leasetest.Scope(t)
	_, err := s.acquire(testCtx(t), scope, "owner", 2_550_000*time.Hour, func(map[int64]*mvccpb.KeyValue, map[int64]markKV) []candidate {
		return []candidate{{value: 0}}
	})
	if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("acquire with a TTL etcd refuses: %v; want lease.ErrBadConfig naming etcd's refusal", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if g, sess, err := lease.NewGenerator(ctx, snowflake.Options{Namespace: t.Name()}, lease.Options{Store: s, Scope: scope, TTL: 2_500_000 * time.Hour}); !errors.Is(err, lease.ErrBadConfig) || ctx.Err() != nil {
		if sess != nil {
			sess.Close()
			g.Close()
		}
		t.Fatalf("a session with ttl 2,500,000h on etcd: %v (context: %v); want lease.ErrBadConfig at once", err, ctx.Err())
	}
}

// openURL is ParseURL and Open, with opts' non-zero fields over the URL's.
func openURL(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	return storeurl.ParseOpen[*Store](ParseURL, func(ctx context.Context, o Options) (*Store, error) {
		o.Prefix, o.RequestTimeout = cmp.Or(opts.Prefix, o.Prefix), cmp.Or(opts.RequestTimeout, o.RequestTimeout)
		return Open(ctx, o)
	})(ctx, rawURL)
}
