package etcdstore

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/segmenttest/storetest"
	"github.com/flurryid/flurry/verify/testenv"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func open(t testing.TB, rawURL string, opts Options) *Store {
	t.Helper()
	s, err := openURL(testCtx(t), rawURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newTestStore(t *testing.T) segment.Store {
	s, err := openURL(testCtx(t), testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { segmenttest.Run(t, newTestStore) }

func TestConcurrentTakers(t *testing.T) { storetest.Concurrent(t, newTestStore, 16, 50) }

// TestOpenDeadServer: Open of a server that is not there fails after the URL's
// dial_timeout, with an error that names the package and not the password. It
// must not wait for the caller's context to end (it is far longer).
func TestOpenDeadServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err := openURL(ctx, "etcd://ann:secret@127.0.0.1:1?dial_timeout=300ms", Options{})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "segment/etcdstore: ") {
		t.Errorf("Open of a dead server: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("Open of a dead server waited for its context to end, not for dial_timeout")
	}
	if _, err := openURL(testCtx(t), "redis://127.0.0.1:1", Options{}); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("Open of a redis URL: %v", err)
	}
}

// TestKeys checks the key layout the package documentation promises.
func TestKeys(t *testing.T) {
	u := testenv.Etcd.URL(t)
	s := open(t, u+"/flurry-test", Options{})
	ctx := testCtx(t)
	tag := storetest.Create(t, s, 1<<62, 10)
	if _, err := s.Take(ctx, tag, 10, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, tag, segment.Block{First: 1<<62 + 6, Last: 1<<62 + 10}); err != nil {
		t.Fatal(err)
	}
	r, err := s.cli.Get(ctx, "flurry-test/segment/tags/"+tag)
	if err != nil || len(r.Kvs) != 1 || !strings.Contains(string(r.Kvs[0].Value), `"max":4611686018427387914,"step":10,`) {
		t.Errorf("tag record = %v, %v", r.Kvs, err)
	}
	r, err = s.cli.Get(ctx, "flurry-test/segment/returned/"+tag+"/4611686018427387910")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "4611686018427387914" {
		t.Errorf("returned key = %v, %v", r.Kvs, err)
	}
	if x := storetest.Find(t, s, tag); time.Since(x.Updated).Abs() > time.Minute || x.Returned != 5 || x.Max != 1<<62+10 {
		t.Errorf("listed %+v", x)
	}
}

// TestNestedTags: the returned blocks of tag a/0000000000000000001 live below
// those of tag a and must not be taken for them.
func TestNestedTags(t *testing.T) {
	s := open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	a := storetest.Create(t, s, 0, 10)
	for _, tag := range []string{a, a + "/0000000000000000001", a + "/0000000000000000001/x"} {
		if tag != a {
			if err := s.Create(ctx, segment.Tag{Name: tag, Step: 10}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Take(ctx, tag, 100, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Nested keys fill more than a page between a's two blocks.
	nested := a + "/0000000000000000001"
	for i := int64(0); i < 20; i++ {
		if err := s.Return(ctx, nested, segment.Block{First: 1 + i*2, Last: 1 + i*2}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Return(ctx, a+"/0000000000000000001/x", segment.Block{First: 5, Last: 9}); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, a, segment.Block{First: 50, Last: 60}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Find(t, s, a); got.Returned != 11 {
		t.Errorf("%s has %d returned, want 11", a, got.Returned)
	}
	if got := storetest.Find(t, s, nested); got.Returned != 20 {
		t.Errorf("%s has %d returned, want 20", nested, got.Returned)
	}
	if b, err := s.Take(ctx, a, 10, 0, 0); err != nil || !b.Returned || b.First != 50 || b.Last != 60 {
		t.Errorf("Take from %s: %+v, %v; want the returned 50..60", a, b, err)
	}
	if b, err := s.Take(ctx, a, 10, 0, 0); err != nil || b.Returned || b.First != 101 {
		t.Errorf("second Take from %s: %+v, %v; want fresh 101..110", a, b, err)
	}
}

// TestReturnGuards: see storetest.ReturnGuards.
func TestReturnGuards(t *testing.T) {
	storetest.ReturnGuards(t, open(t, testenv.Etcd.URL(t), Options{Prefix: "flurry-test"}))
}

// TestNew: a store on a caller's client leaves it open.
func TestNew(t *testing.T) {
	u := testenv.Etcd.URL(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{strings.Replace(u, "etcd://", "http://", 1)}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) accepted")
	}
	s, err := New(cli, Options{Prefix: "flurry-test/"})
	if err != nil {
		t.Fatal(err)
	}
	tag := storetest.Create(t, s, 0, 10)
	s.Close()
	if b, err := s.Take(testCtx(t), tag, 5, 0, 0); err != nil || b.First != 1 {
		t.Fatalf("Take after Close of a store on the caller's client: %+v, %v", b, err)
	}
}

func BenchmarkTake(b *testing.B) {
	storetest.BenchmarkTake(b, open(b, testenv.Etcd.URL(b), Options{Prefix: "flurry-test"}))
}

// openURL is ParseURL and Open, with opts' non-zero fields over the URL's.
func openURL(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	return storeurl.ParseOpen[*Store](ParseURL, func(ctx context.Context, o Options) (*Store, error) {
		o.Prefix, o.RequestTimeout = cmp.Or(opts.Prefix, o.Prefix), cmp.Or(opts.RequestTimeout, o.RequestTimeout)
		return Open(ctx, o)
	})(ctx, rawURL)
}
