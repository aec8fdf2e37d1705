package redisstore

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
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
	u := testenv.Redis.URL(t)
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
		addr      string
		db        int
		user      string
		want      Options
		err       string // part of the error; "" for none
	}{
		{name: "plain", url: "redis://127.0.0.1:6379", addr: "127.0.0.1:6379"},
		{name: "db and prefix", url: "redis://h:7000/3?prefix=ids:lease", addr: "h:7000", db: 3, want: Options{Prefix: "ids:lease"}},
		{name: "store keys", url: "redis://h:1/0?prefix=q&wait_replicas=1&wait_timeout=250ms",
			addr: "h:1", want: Options{Prefix: "q", WaitReplicas: 1, WaitTimeout: 250 * time.Millisecond}},
		{name: "client keys pass", url: "redis://h:1/0?dial_timeout=2s&max_retries=1", addr: "h:1"},
		{name: "user", url: "redis://ann:secret@h:1/0", addr: "h:1", user: "ann"},
		{name: "bad scheme", url: "http://h:1", err: "scheme"},
		{name: "unix", url: "unix:///tmp/redis.sock", err: "scheme"},
		{name: "unknown key", url: "redis://h:1/0?ttl=5s", err: "unexpected option: ttl"},
		{name: "bad db", url: "redis://h:1/x", err: "database"},
		{name: "bad wait", url: "redis://h:1/0?wait_replicas=-1", err: "wait_replicas"},
		{name: "bad wait timeout", url: "redis://h:1/0?wait_timeout=soon", err: "wait_timeout"},
		{name: "password redacted", url: "redis://ann:secret@h:1/0?nope=1", err: "ann:xxxxx@h:1"},
		{name: "password redacted, bad port", url: "redis://ann:secret@h:port/0", err: "port must be a number"},
		{name: "password redacted, bad scheme", url: "http://ann:secret@h:1/0", err: "scheme"},
		{name: "request timeout", url: "redis://h:1/0?request_timeout=2s", addr: "h:1", want: Options{RequestTimeout: 2 * time.Second}},
		{name: "bad request timeout", url: "redis://h:1/0?request_timeout=0s", err: "request_timeout"},
		{name: "two hosts need sentinel", url: "redis://h:1,h:2/0", err: "redis+sentinel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseURL(tc.url)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "lease/redisstore: ") {
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
			ro := o.Client
			if ro.Addr != tc.addr || ro.DB != tc.db || ro.Username != tc.user || !ro.ContextTimeoutEnabled {
				t.Errorf("redis options addr %q db %d user %q ctx %v", ro.Addr, ro.DB, ro.Username, ro.ContextTimeoutEnabled)
			}
			if o.Client, tc.want.Client = nil, nil; o != tc.want {
				t.Errorf("options %+v; want %+v", o, tc.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := testCtx(t)
	// Nothing listens on port 1; the password must not show.
	_, err := openURL(ctx, "redis://ann:secret@127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1", Options{})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "lease/redisstore: ") {
		t.Errorf("Open of a dead server: %v", err)
	}
	if _, err := openURL(ctx, "redis://127.0.0.1:1/0", Options{Prefix: "a{b}"}); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("Open with a bad prefix: %v", err)
	}
	if _, err := New(redis.NewRing(&redis.RingOptions{}), Options{WaitReplicas: 1}); err == nil || !strings.Contains(err.Error(), "WaitReplicas") {
		t.Errorf("WaitReplicas with a Ring: %v", err)
	}
	if _, err := Open(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "ParseURL") {
		t.Errorf("Open without a client's options: %v", err)
	}
}

// TestKeys checks the key layout docs/leases.md promises, and that the
// mark stays in Redis after the lease ends.
func TestKeys(t *testing.T) {
	u := testenv.Redis.URL(t)
	s := open(t, u, Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 3, "me", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l, 12345); err != nil {
		t.Fatal(err)
	}
	rdb := s.conn.Client
	tag := "{flurry-test:" + scope + "}:"
	if m, err := rdb.HGet(ctx, tag+"marks", "0000000").Result(); err != nil || m != "12345" {
		t.Errorf("mark = %q, %v", m, err)
	}
	if sc, err := rdb.ZScore(ctx, tag+"free", "0000000").Result(); err != nil || sc != 12345 {
		t.Errorf("free score = %v, %v", sc, err)
	}
	if n, err := rdb.Get(ctx, tag+"next").Result(); err != nil || n != "1" {
		t.Errorf("next = %q, %v", n, err)
	}
	for _, k := range s.keys(scope) {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl >= 0 {
			t.Errorf("%s has a TTL %v; nothing may expire", k, ttl)
		}
	}
	if slot := func(k string) int64 { return rdb.ClusterKeySlot(ctx, k).Val() }; slot(tag+"marks") != slot(tag+"next") {
		t.Errorf("the scope's keys are in different cluster slots")
	}
}

// TestMixedSizes: values above a smaller pool size are stepped over, not handed out.
func TestMixedSizes(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	var ls []lease.Lease
	for range 100 {
		l, err := s.Acquire(ctx, scope, 100, "big", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	for i := len(ls) - 1; i >= 0; i-- { // value 99 gets the lowest mark
		if err := s.Release(ctx, ls[i], int64(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.Acquire(ctx, scope, 2, "small", 2*time.Second)
	if err != nil || l.Value != 0 || l.Mark != 1000 {
		t.Fatalf("Acquire from a smaller pool = %+v, %v; want value 0 mark 1000", l, err)
	}
	l, err = s.Acquire(ctx, scope, 2, "small", 2*time.Second)
	if err != nil || l.Value != 1 {
		t.Fatalf("second Acquire = %+v, %v", l, err)
	}
	if _, err := s.Acquire(ctx, scope, 2, "small", 2*time.Second); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Fatalf("third Acquire: %v", err)
	}
}

// TestBigPool: a pool of 2^22 values costs no more than a small one: the store
// keeps a record per value handed out, not per value of the pool, and an Acquire
// does not walk the pool (200 of them within the test's context, which a walk of
// 2^22 values in the script each time would not finish).
func TestBigPool(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	for i := range int64(200) {
		l, err := s.Acquire(ctx, scope, 1<<22, "big", 2*time.Second)
		if err != nil || l.Value != i {
			t.Fatalf("Acquire %d = %+v, %v", i, l, err)
		}
	}
	rdb := s.conn.Client
	k := s.keys(scope) // marks, held, free, tokens, owners, next
	marks, _ := rdb.HLen(ctx, k[0]).Result()
	held, _ := rdb.ZCard(ctx, k[1]).Result()
	free, _ := rdb.ZCard(ctx, k[2]).Result()
	next, _ := rdb.Get(ctx, k[5]).Result()
	if marks != 200 || held != 200 || free != 0 || next != "200" {
		t.Errorf("after 200 acquisitions from a 2^22 pool: %d marks, %d held, %d free, next %q; want 200, 200, 0, 200", marks, held, free, next)
	}
}

func TestWaitReplicas(t *testing.T) {
	// The test server has no replicas, so asking for one must fail the write,
	// never report it lost, and give an acquired value back.
	u := testenv.Redis.URL(t)
	s := open(t, u, Options{Prefix: "flurry-test", WaitReplicas: 1, WaitTimeout: 100 * time.Millisecond})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	_, err := s.Acquire(ctx, scope, 1, "a", 2*time.Second)
	if !errors.Is(err, ErrNotReplicated) || errors.Is(err, lease.ErrLost) || !strings.Contains(err.Error(), "0 of 1 replicas") {
		t.Fatalf("Acquire with WaitReplicas=1 and no replica: %v", err)
	}
	if nr, ok := errors.AsType[*NotReplicatedError](err); !ok || nr.Got != 0 || nr.Want != 1 {
		t.Errorf("errors.AsType[*NotReplicatedError](%v) = %+v, %v; want 0 of 1", err, nr, ok)
	}
	plain := open(t, u, Options{Prefix: "flurry-test"})
	l, err := plain.Acquire(ctx, scope, 1, "b", 2*time.Second)
	if err != nil {
		t.Fatalf("the value was not given back after the failed WAIT: %v", err)
	}
	if _, err := s.Renew(ctx, l, 2*time.Second, 5); !errors.Is(err, ErrNotReplicated) || errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew with WaitReplicas=1 and no replica: %v", err)
	}
	zero := open(t, u, Options{Prefix: "flurry-test", WaitReplicas: 0})
	if _, err := zero.Renew(ctx, l, 2*time.Second, 5); err != nil {
		t.Errorf("Renew: %v", err)
	}
	// A takeover that was not acknowledged is given back with the raised mark: the
	// value is free, and l's token retired.
	if _, err := s.Takeover(ctx, l, "c", 2*time.Second, 9); !errors.Is(err, ErrNotReplicated) || errors.Is(err, lease.ErrLost) {
		t.Errorf("Takeover with WaitReplicas=1 and no replica: %v", err)
	}
	if _, err := zero.Renew(ctx, l, 2*time.Second, 5); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew after an unacknowledged takeover: %v; want ErrLost", err)
	}
	if l, err := zero.AcquireValue(ctx, scope, 0, "d", 2*time.Second); err != nil || l.Mark != 9 {
		t.Errorf("AcquireValue after an unacknowledged takeover = %+v, %v; want the value free with mark 9", l, err)
	}
}

// openURL is ParseURL and Open, with opts' non-zero fields over the URL's.
func openURL(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	return storeurl.ParseOpen[*Store](ParseURL, func(ctx context.Context, o Options) (*Store, error) {
		o.Prefix, o.WaitReplicas = cmp.Or(opts.Prefix, o.Prefix), cmp.Or(opts.WaitReplicas, o.WaitReplicas)
		o.WaitTimeout, o.RequestTimeout = cmp.Or(opts.WaitTimeout, o.WaitTimeout), cmp.Or(opts.RequestTimeout, o.RequestTimeout)
		return Open(ctx, o)
	})(ctx, rawURL)
}

// TestWithoutEpochs: a scope written by a flurry from before epochs has no epochs
// hash; its values read as epoch 0, and the next write counts 1.
func TestWithoutEpochs(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	scope := leasetest.Scope(t)
	l, err := s.Acquire(ctx, scope, 1, "a", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	k := s.keys(scope)
	if n, err := s.conn.Client.Del(ctx, k[6]).Result(); err != nil || n != 1 {
		t.Fatalf("DEL %s = %d, %v; want the epochs hash deleted", k[6], n, err)
	}
	recs, err := s.List(ctx, scope)
	if err != nil || len(recs) != 1 || recs[0].Epoch != 0 || !recs[0].Held {
		t.Fatalf("List without epochs = %+v, %v; want the held value at epoch 0", recs, err)
	}
	n, err := s.Takeover(ctx, l, "b", 2*time.Second, 5)
	if err != nil || n.Epoch != 1 {
		t.Fatalf("Takeover without epochs = %+v, %v; want epoch 1", n, err)
	}
}
