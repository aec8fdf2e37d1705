package etcdconn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Keeper renews etcd leases once each, like clientv3's KeepAliveOnce, over a few
// keep-alive streams that every call of the client shares. KeepAliveOnce opens a
// stream per call: with thousands of sessions in a process renewing every few
// seconds, setting up and tearing down those streams is most of etcd's work, and a
// process of 3,000 sessions saw most renewals wait past their deadline. A fixed set
// of streams (Streams) carries them all, a lease always on the same one; each call
// gets the answer to its own request, and a lease that is gone is reported to its
// own caller only. There are several because etcd answers the requests of one
// stream one at a time, each after the member has applied every committed write: a
// single stream under thousands of renewals a second would queue them.
//
// Unlike clientv3's Lease.KeepAlive, a Keeper renews a lease only when asked:
// nothing keeps a lease alive whose holder stopped renewing.
//
// It is safe for concurrent use; Close ends the stream.
type Keeper struct {
	remote pb.LeaseClient

	// lanes carry each call's request to the goroutine that owns the sending side
	// of its lane's current stream; a lease's calls take lane ID mod Streams.
	lanes [Streams]chan *kaCall

	once   sync.Once // starts the senders
	ctx    context.Context
	cancel context.CancelFunc
}

// Streams is how many keep-alive streams a Keeper keeps open.
const Streams = 32

// kaCall is one renewal waiting for its answer.
type kaCall struct {
	id   int64
	done chan kaResult // buffered: the answer never waits for the caller
}

type kaResult struct {
	ttl int64
	err error
}

// kaStream is one keep-alive stream and the calls sent on it that wait for an
// answer, per lease in the order sent: etcd answers a stream's requests in turn.
type kaStream struct {
	s       pb.Lease_LeaseKeepAliveClient
	cancel  context.CancelFunc
	mu      sync.Mutex
	pending map[int64][]*kaCall
	failed  error
}

// NewKeeper returns a Keeper on cli's connection.
func NewKeeper(cli *clientv3.Client) *Keeper {
	ctx, cancel := context.WithCancel(context.Background())
	k := &Keeper{remote: clientv3.RetryLeaseClient(cli), ctx: ctx, cancel: cancel}
	for i := range k.lanes {
		k.lanes[i] = make(chan *kaCall)
	}
	return k
}

// ErrKeeperClosed is returned by KeepAliveOnce after Close.
var ErrKeeperClosed = errors.New("etcd lease renewals: the store is closed")

// KeepAliveOnce renews lease id once and returns the TTL etcd granted, in
// seconds. It returns an error matching rpctypes.ErrLeaseNotFound when the lease
// is gone, and ctx's error when ctx ends first.
func (k *Keeper) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (ttl int64, err error) {
	if k.ctx.Err() != nil {
		return 0, ErrKeeperClosed
	}
	k.once.Do(func() {
		for _, lane := range k.lanes {
			go k.sender(lane)
		}
	})
	c := &kaCall{id: int64(id), done: make(chan kaResult, 1)}
	select {
	case k.lanes[uint64(id)%Streams] <- c:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-k.ctx.Done():
		return 0, ErrKeeperClosed
	}
	select {
	case r := <-c.done:
		return r.ttl, r.err
	case <-ctx.Done():
		// The answer, when it comes, lands in c.done's buffer and is dropped.
		return 0, ctx.Err()
	}
}

// sender sends each call of its lane on the lane's current stream, opening a
// stream when there is none or the last one failed.
func (k *Keeper) sender(lane chan *kaCall) {
	var cur *kaStream
	for {
		var c *kaCall
		select {
		case c = <-lane:
		case <-k.ctx.Done():
			if cur != nil {
				cur.cancel()
			}
			return
		}
		if cur != nil && cur.err() != nil {
			cur = nil
		}
		if cur == nil {
			var err error
			if cur, err = k.open(); err != nil {
				c.done <- kaResult{err: fmt.Errorf("opening an etcd keep-alive stream: %w", err)}
				cur = nil
				continue
			}
		}
		// Registered before the send, so that the answer always finds it.
		if err := cur.add(c); err != nil {
			c.done <- kaResult{err: err}
			cur = nil
			continue
		}
		if err := cur.s.Send(&pb.LeaseKeepAliveRequest{ID: c.id}); err != nil {
			cur.fail(fmt.Errorf("etcd keep-alive stream: %w", err))
			cur.cancel()
			cur = nil
		}
	}
}

// open starts a stream and the goroutine that reads its answers. The stream asks
// for a leader: a member cut off from the cluster's leader fails the stream, and
// the calls on it, instead of holding them.
func (k *Keeper) open() (*kaStream, error) {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(k.ctx))
	s, err := k.remote.LeaseKeepAlive(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	st := &kaStream{s: s, cancel: cancel, pending: map[int64][]*kaCall{}}
	go st.receive()
	return st, nil
}

func (st *kaStream) add(c *kaCall) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed != nil {
		return st.failed
	}
	st.pending[c.id] = append(st.pending[c.id], c)
	return nil
}

func (st *kaStream) err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.failed
}

// fail ends the stream's pending calls with err.
func (st *kaStream) fail(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed == nil {
		st.failed = err
	}
	for id, cs := range st.pending {
		for _, c := range cs {
			c.done <- kaResult{err: st.failed}
		}
		delete(st.pending, id)
	}
}

// receive hands each answer to the oldest call of its lease.
func (st *kaStream) receive() {
	for {
		r, err := st.s.Recv()
		if err != nil {
			st.fail(fmt.Errorf("etcd keep-alive stream: %w", err))
			st.cancel()
			return
		}
		st.mu.Lock()
		cs := st.pending[r.ID]
		var c *kaCall
		if len(cs) > 0 {
			c = cs[0]
			if len(cs) == 1 {
				delete(st.pending, r.ID)
			} else {
				st.pending[r.ID] = cs[1:]
			}
		}
		st.mu.Unlock()
		if c == nil {
			continue
		}
		if r.TTL <= 0 {
			c.done <- kaResult{err: rpctypes.ErrLeaseNotFound}
		} else {
			c.done <- kaResult{ttl: r.TTL}
		}
	}
}

// Close ends the stream; calls waiting on it fail.
func (k *Keeper) Close() { k.cancel() }
