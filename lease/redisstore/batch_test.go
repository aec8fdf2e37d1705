package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// roundTrips counts the commands a client sends one by one and the pipelines it
// sends.
type roundTrips struct{ single, pipelines atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.single.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.pipelines.Add(1)
		return next(ctx, cmds)
	}
}

var _ redis.Hook = (*roundTrips)(nil)

// TestRenewalsArePipelined: renewals of many sessions that arrive together share
// round trips, and each still gets its own reply: a lost lease fails its own
// renewal only.
func TestRenewalsArePipelined(t *testing.T) {
	o, err := ParseURL(testenv.Redis.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	o.Client.ContextTimeoutEnabled = true
	client := redis.NewClient(o.Client)
	defer client.Close()
	var rt roundTrips
	client.AddHook(&rt)
	s, err := New(client, Options{Prefix: "flurry-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scope := leasetest.Scope(t)
	const holders = 200
	ls := make([]lease.Lease, holders)
	for i := range ls {
		if ls[i], err = s.Acquire(ctx, scope, 1<<16, fmt.Sprintf("holder-%d", i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// One holder's lease ends under it.
	if err := s.Release(ctx, ls[9], 1); err != nil {
		t.Fatal(err)
	}
	single, pipes := rt.single.Load(), rt.pipelines.Load()
	errs := make([]error, holders)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range ls {
		wg.Go(func() {
			<-start
			var l lease.Lease
			l, errs[i] = s.Renew(ctx, ls[i], time.Minute, int64(1000+i))
			if errs[i] == nil && l.Mark != int64(1000+i) {
				t.Errorf("renewal %d: mark %d; want its own %d", i, l.Mark, 1000+i)
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if i == 9 && !errors.Is(err, lease.ErrLost) {
			t.Errorf("renewal of the released lease: %v; want ErrLost", err)
		}
		if i != 9 && err != nil {
			t.Errorf("renewal %d: %v", i, err)
		}
	}
	trips := rt.single.Load() - single + rt.pipelines.Load() - pipes
	t.Logf("%d concurrent renewals: %d round trips", holders, trips)
	if trips > holders/2 {
		t.Errorf("%d concurrent renewals took %d round trips; want them pipelined", holders, trips)
	}
	for i, l := range ls {
		if i != 9 {
			s.Release(ctx, l, 1)
		}
	}
}
