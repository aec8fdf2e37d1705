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
	s, err := openURL(testCtx(t), testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { segmenttest.Run(t, newTestStore) }

func TestConcurrentTakers(t *testing.T) { storetest.Concurrent(t, newTestStore, 16, 200) }

func TestOpenErrors(t *testing.T) {
	ctx := testCtx(t)
	_, err := openURL(ctx, "redis://ann:secret@127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1", Options{})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "segment/redisstore: ") {
		t.Errorf("Open of a dead server: %v", err)
	}
	if _, err := openURL(ctx, "http://127.0.0.1:1/0", Options{}); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("Open of an http URL: %v", err)
	}
	if _, err := openURL(ctx, "redis://127.0.0.1:1/0", Options{Prefix: "a{b}"}); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("Open with a bad prefix: %v", err)
	}
	if _, err := New(redis.NewRing(&redis.RingOptions{}), Options{WaitReplicas: 1}); err == nil || !strings.Contains(err.Error(), "WaitReplicas") {
		t.Errorf("WaitReplicas with a Ring: %v", err)
	}
}

// TestKeys checks the key layout docs/segments.md promises.
func TestKeys(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	tag := storetest.Create(t, s, 1<<62, 10)
	if _, err := s.Take(ctx, tag, 10, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, tag, segment.Block{First: 1<<62 + 6, Last: 1<<62 + 10}); err != nil {
		t.Fatal(err)
	}
	rdb := s.conn.Client
	h := "{flurry-test:" + tag + "}:"
	if m, err := rdb.HGet(ctx, h+"tag", "max").Result(); err != nil || m != "4611686018427387914" {
		t.Errorf("max = %q, %v", m, err)
	}
	if ms, err := rdb.ZRange(ctx, h+"returned", 0, -1).Result(); err != nil || len(ms) != 1 || ms[0] != "4611686018427387910:4611686018427387914" {
		t.Errorf("returned = %q, %v", ms, err)
	}
	if ok, err := rdb.SIsMember(ctx, "{flurry-test}:tags", tag).Result(); err != nil || !ok {
		t.Errorf("%s not in the index: %v", tag, err)
	}
	for _, k := range s.keys(tag) {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl >= 0 {
			t.Errorf("%s has a TTL %v; nothing may expire", k, ttl)
		}
	}
	if slot := func(k string) int64 { return rdb.ClusterKeySlot(ctx, k).Val() }; slot(h+"tag") != slot(h+"returned") {
		t.Errorf("the tag's keys are in different cluster slots")
	}
	// Updated is Redis's clock.
	if x := storetest.Find(t, s, tag); time.Since(x.Updated).Abs() > time.Minute || x.Returned != 5 {
		t.Errorf("listed %+v", x)
	}
}

// TestReturnGuards: see storetest.ReturnGuards.
func TestReturnGuards(t *testing.T) {
	storetest.ReturnGuards(t, open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"}))
}

// TestCreateAfterHalfCreate: a name in the index without a hash (a Create that
// failed between its two commands) is not listed, and Create completes it.
func TestCreateAfterHalfCreate(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	tag := segmenttest.TagName(t)
	if err := s.conn.Client.SAdd(ctx, s.index(), tag).Err(); err != nil {
		t.Fatal(err)
	}
	tags, err := s.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tags {
		if x.Name == tag {
			t.Fatalf("half-created tag listed: %+v", x)
		}
	}
	if err := s.Create(ctx, segment.Tag{Name: tag, Step: 5}); err != nil {
		t.Fatal(err)
	}
	if x := storetest.Find(t, s, tag); x.Step != 5 {
		t.Errorf("listed %+v", x)
	}
}

func TestWaitReplicas(t *testing.T) {
	// The test server has no replicas: a Take asking for one must fail and hand
	// nothing out, and the next Take must start above the lost block.
	u := testenv.Redis.URL(t)
	plain := open(t, u, Options{Prefix: "flurry-test"})
	s := open(t, u, Options{Prefix: "flurry-test", WaitReplicas: 1, WaitTimeout: 50 * time.Millisecond})
	ctx := testCtx(t)
	tag := storetest.Create(t, plain, 0, 10)
	b, err := s.Take(ctx, tag, 10, 0, 0)
	if !errors.Is(err, ErrNotReplicated) || !strings.Contains(err.Error(), "0 of 1 replicas") || b != (segment.Block{}) {
		t.Fatalf("Take with WaitReplicas=1 and no replica: %+v, %v", b, err)
	}
	if nr, ok := errors.AsType[*NotReplicatedError](err); !ok || nr.Got != 0 || nr.Want != 1 {
		t.Errorf("errors.AsType[*NotReplicatedError](%v) = %+v, %v; want 0 of 1", err, nr, ok)
	}
	if b, err := plain.Take(ctx, tag, 10, 0, 0); err != nil || b.First != 11 {
		t.Fatalf("Take after the lost block: %+v, %v; want 11..20", b, err)
	}
	if err := s.Return(ctx, tag, segment.Block{First: 15, Last: 20}); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("Return with WaitReplicas=1 and no replica: %v", err)
	}
	if err := s.SetStep(ctx, tag, 20); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("SetStep with WaitReplicas=1 and no replica: %v", err)
	}
	if err := s.Create(ctx, segment.Tag{Name: segmenttest.TagName(t), Step: 1}); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("Create with WaitReplicas=1 and no replica: %v", err)
	}
	// Failures and reads need no replica.
	if _, err := s.Take(ctx, segmenttest.TagName(t), 1, 0, 0); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("Take of an unknown tag: %v", err)
	}
	if _, err := s.Tags(ctx); err != nil {
		t.Errorf("Tags: %v", err)
	}
}

func BenchmarkTake(b *testing.B) {
	storetest.BenchmarkTake(b, open(b, testenv.Redis.URL(b), Options{Prefix: "flurry-test"}))
}

// TestPrecision: values that doubles cannot hold (2^53+1 and up) come out exact,
// as floors, maxes and returned blocks.
func TestPrecision(t *testing.T) {
	s := open(t, testenv.Redis.URL(t), Options{Prefix: "flurry-test"})
	ctx := testCtx(t)
	tag := storetest.Create(t, s, 0, 10)
	const big = 1<<53 + 1
	b, err := s.Take(ctx, tag, 3, big, 0)
	if err != nil || b.First != big+1 || b.Last != big+3 {
		t.Fatalf("Take above floor 2^53+1: %+v, %v", b, err)
	}
	if b, err = s.Take(ctx, tag, 1, 0, 0); err != nil || b.First != big+4 {
		t.Fatalf("next Take: %+v, %v", b, err)
	}
	if err := s.Return(ctx, tag, segment.Block{First: big + 2, Last: big + 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, tag, 1, big+2, 0); err != nil {
		t.Fatal(err) // a fresh block: the returned one is not above the floor
	}
	if b, err = s.Take(ctx, tag, 1, big+1, 0); err != nil || !b.Returned || b.First != big+2 {
		t.Fatalf("claim above floor 2^53+1: %+v, %v", b, err)
	}
	if _, err := s.Take(ctx, tag, 2, 0, big+6); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("Take past limit 2^53+6: %v", err)
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
