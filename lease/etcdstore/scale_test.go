package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/flurryid/flurry/internal/etcdconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// requests counts the gRPC calls a store's client makes, by method: unary calls
// and streams opened.
type requests struct {
	mu      sync.Mutex
	unary   map[string]int
	streams map[string]int
}

func (r *requests) snapshot() (unary, streams map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unary, streams = map[string]int{}, map[string]int{}
	for k, v := range r.unary {
		unary[k] = v
	}
	for k, v := range r.streams {
		streams[k] = v
	}
	return unary, streams
}

func total(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// diff returns b minus a, by method.
func diff(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// countingStore opens a store whose client counts its requests.
func countingStore(t *testing.T) (*Store, *requests) {
	t.Helper()
	o, err := ParseURL(testenv.Etcd.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	r := &requests{unary: map[string]int{}, streams: map[string]int{}}
	o.Prefix = "flurry-test"
	o.Client.DialOptions = append(o.Client.DialOptions,
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			r.mu.Lock()
			r.unary[method]++
			r.mu.Unlock()
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			r.mu.Lock()
			r.streams[method]++
			r.mu.Unlock()
			return streamer(ctx, desc, cc, method, opts...)
		}))
	s, err := Open(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, r
}

const timeToLive = "/etcdserverpb.Lease/LeaseTimeToLive"

// TestListReadsEveryExpiryAtOnce: List of a scope with many holders costs a few
// range reads, not a request for the TTL of each holder's etcd lease (N nodes
// starting together in one scope cost N²/2 requests that way), and still gives
// each holder's expiry.
func TestListReadsEveryExpiryAtOnce(t *testing.T) {
	s, r := countingStore(t)
	scope := leasetest.Scope(t)
	const holders = 50
	before := time.Now()
	var ls []lease.Lease
	for i := range holders {
		l, err := s.Acquire(testCtx(t), scope, 1<<16, fmt.Sprintf("holder-%d", i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	// A renewal rewrites the expiry: List gives the renewed one.
	renewed, err := s.Renew(testCtx(t), ls[7], 2*time.Minute, 5)
	if err != nil {
		t.Fatal(err)
	}
	ls[7] = renewed // a longer TTL moves the value to a new etcd lease, a new token
	u0, _ := r.snapshot()
	recs, err := s.List(testCtx(t), scope)
	if err != nil {
		t.Fatal(err)
	}
	u1, _ := r.snapshot()
	calls := diff(u0, u1)
	if calls[timeToLive] != 0 || total(calls) > 6 {
		t.Errorf("List of %d holders made %v; want a few range reads, no %s", holders, calls, timeToLive)
	}
	if len(recs) != holders {
		t.Fatalf("List gave %d records; want %d", len(recs), holders)
	}
	for i, rec := range recs {
		want := ls[i].Expires
		if !rec.Held || rec.Token != ls[i].Token || rec.Expires.Before(before) || rec.Expires.Sub(want).Abs() > time.Second {
			t.Errorf("record %+v; want held by %s until about %v", rec, ls[i].Token, want)
		}
	}
	// A holder from before expiry keys (none under its value) is asked for its TTL.
	if _, err := s.cli.Delete(testCtx(t), s.expKey(scope, 3)); err != nil {
		t.Fatal(err)
	}
	recs, err = s.List(testCtx(t), scope)
	if err != nil {
		t.Fatal(err)
	}
	u2, _ := r.snapshot()
	if n := diff(u1, u2)[timeToLive]; n != 1 || !recs[3].Held || recs[3].Expires.Sub(ls[3].Expires).Abs() > 2*time.Second {
		t.Errorf("a holder without an expiry key: %d TTL requests, record %+v; want 1 and the lease's expiry %v", n, recs[3], ls[3].Expires)
	}
	for _, l := range ls[8:] {
		if err := s.Release(testCtx(t), l, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRenewalsShareOneStream: concurrent renewals of many leases go over the few
// keep-alive streams the store keeps, not a stream each, and a lease that is gone fails its own
// renewal only.
func TestRenewalsShareOneStream(t *testing.T) {
	s, r := countingStore(t)
	scope := leasetest.Scope(t)
	const holders = 40
	var ls []lease.Lease
	for i := range holders {
		l, err := s.Acquire(testCtx(t), scope, 1<<16, fmt.Sprintf("holder-%d", i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	renewAll := func() []error {
		errs := make([]error, holders)
		var wg sync.WaitGroup
		for i := range ls {
			wg.Go(func() {
				l, err := s.Renew(testCtx(t), ls[i], time.Minute, int64(100+i))
				if err == nil {
					ls[i] = l
				}
				errs[i] = err
			})
		}
		wg.Wait()
		return errs
	}
	_, s0 := r.snapshot()
	for range 3 {
		for i, err := range renewAll() {
			if err != nil {
				t.Fatalf("renewal of %d: %v", i, err)
			}
		}
	}
	// The etcd lease of one holder ends: its renewal, and only its, is lost.
	id, _ := leaseID(ls[5].Token)
	if _, err := s.cli.Revoke(testCtx(t), id); err != nil {
		t.Fatal(err)
	}
	for i, err := range renewAll() {
		if i == 5 && !errors.Is(err, lease.ErrLost) {
			t.Errorf("renewal of the revoked lease: %v; want ErrLost", err)
		}
		if i != 5 && err != nil {
			t.Errorf("renewal of %d beside a revoked lease: %v", i, err)
		}
	}
	_, s1 := r.snapshot()
	if n := diff(s0, s1)["/etcdserverpb.Lease/LeaseKeepAlive"]; n < 1 || n > etcdconn.Streams {
		t.Errorf("%d renewals opened %d keep-alive streams; want at most the %d the store shares", 4*holders, n, etcdconn.Streams)
	}
	for i, l := range ls {
		if i != 5 {
			s.Release(testCtx(t), l, 1)
		}
	}
}

// TestRacingAcquirersSpread: acquirers of one scope that start together cost a few
// requests each, not a round of reads and lost races per winner ahead of them.
func TestRacingAcquirersSpread(t *testing.T) {
	s, r := countingStore(t)
	scope := leasetest.Scope(t)
	const racers = 50
	u0, _ := r.snapshot()
	ls := make([]lease.Lease, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			l, err := s.Acquire(testCtx(t), scope, 1<<16, fmt.Sprintf("racer-%d", i), time.Minute)
			if err != nil {
				t.Error(err)
			}
			ls[i] = l
		})
	}
	close(start)
	wg.Wait()
	u1, _ := r.snapshot()
	calls := diff(u0, u1)
	seen := map[int64]bool{}
	for _, l := range ls {
		if seen[l.Value] {
			t.Errorf("value %d given twice", l.Value)
		}
		seen[l.Value] = true
	}
	if n := total(calls); n > 8*racers {
		t.Errorf("%d racing acquirers made %d requests (%v); want at most 8 each", racers, n, calls)
	}
	t.Logf("%d racing acquirers: %d requests: %v", racers, total(calls), calls)
	for _, l := range ls {
		s.Release(testCtx(t), l, 1)
	}
}
