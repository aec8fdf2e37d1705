package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry"
	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
)

// Client hands out IDs of flurry servers' namespaces from per-namespace buffers
// that it refills in batches, failing over between servers. It is safe for
// concurrent use. Create it with New and Close it when done.
type Client struct {
	servers    []*server    // the local region's, then each remote region's (server.tier)
	tiers      int          // 1 + len(Options.Remote)
	last       atomic.Int32 // index of the last server that answered
	transport  Transport
	token      string
	tokens     map[string]string
	batch      int
	low        int
	maxBatch   int  // the largest request an adaptive Batch grows to
	autoBatch  bool // Options.Batch was zero: size requests from the drain rate
	autoLow    bool // Options.LowWater was zero: size the low-water mark from it
	timeout    time.Duration
	backoff    time.Duration
	maxBackoff time.Duration
	hedge      bool // Options.NoHedge was false
	hedgeMin   time.Duration
	hedgeMax   time.Duration
	ownHTTP    *http.Client // made by New; its idle connections are closed on Close

	ctx    context.Context // ends on Close; background refills run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex // guards closed and writers of namespaces
	closed     bool
	namespaces atomic.Pointer[map[string]*Namespace] // copy on write

	mixMu sync.Mutex
	mixes map[string]*mixCheck // by namespace: what the servers said of it (vet)
}

// server is one server and its failure state.
type server struct {
	url    string
	idx    int    // in Client.servers
	tier   int    // 0: the local region (Options.Servers); k: Options.Remote[k-1]
	region string // the remote region's name; "" for the local one
	rpc    flurryv1connect.IDServiceClient

	requests  atomic.Int64
	failures  atomic.Int64
	hedges    atomic.Int64 // requests sent to it as hedges
	hedgesWon atomic.Int64 // of which its answer was used
	outHedged atomic.Int64 // requests abandoned because a hedge to another server answered first
	lat       latency      // its round trips, for its hedge delay

	mu        sync.Mutex
	inARow    int       // failures since the last success
	downUntil time.Time // passed over until then
	lastErr   error
}

// New checks opts and returns a Client. It does not contact the servers: the first
// Next of a namespace does.
func New(opts Options) (*Client, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("client: no server; set Options.Servers to at least one URL such as http://127.0.0.1:8080")
	}
	if opts.Transport > GRPC {
		return nil, fmt.Errorf("client: unknown %v; use client.HTTP or client.GRPC", opts.Transport)
	}
	c := &Client{
		transport:  opts.Transport,
		token:      opts.Token,
		tokens:     maps(opts.Tokens),
		batch:      opts.Batch,
		low:        opts.LowWater,
		timeout:    opts.Timeout,
		backoff:    opts.Backoff,
		maxBackoff: opts.MaxBackoff,
		hedge:      !opts.NoHedge,
		hedgeMin:   opts.HedgeMinDelay,
		hedgeMax:   opts.HedgeMaxDelay,
	}
	switch {
	case c.batch < 0:
		return nil, fmt.Errorf("client: Batch %d is negative; use 0 for the default (%d)", c.batch, DefaultBatch)
	case c.batch == 0:
		c.batch = DefaultBatch
		c.autoBatch = true
	}
	c.maxBatch = max(c.batch, maxBatch)
	switch {
	case c.low == 0:
		c.low = c.batch / 2
		c.autoLow = true
	case c.low < 0:
		c.low = 0 // remaining < 0 never holds: no prefetch
	}
	if c.timeout < 0 || c.backoff < 0 || c.maxBackoff < 0 {
		return nil, errors.New("client: Timeout, Backoff and MaxBackoff must not be negative; use 0 for the defaults")
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.backoff == 0 {
		c.backoff = DefaultBackoff
	}
	if c.maxBackoff == 0 {
		c.maxBackoff = max(DefaultMaxBackoff, c.backoff)
	}
	if c.maxBackoff < c.backoff {
		return nil, fmt.Errorf("client: MaxBackoff %v is below Backoff %v", c.maxBackoff, c.backoff)
	}
	if c.hedgeMin < 0 || c.hedgeMax < 0 {
		return nil, errors.New("client: HedgeMinDelay and HedgeMaxDelay must not be negative; use 0 for the defaults, NoHedge to turn hedging off")
	}
	if c.hedgeMax == 0 {
		c.hedgeMax = max(DefaultHedgeMaxDelay, c.hedgeMin)
	}
	if c.hedgeMin == 0 {
		c.hedgeMin = min(DefaultHedgeMinDelay, c.hedgeMax)
	}
	if c.hedgeMax < c.hedgeMin {
		return nil, fmt.Errorf("client: HedgeMaxDelay %v is below HedgeMinDelay %v", c.hedgeMax, c.hedgeMin)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = newHTTPClient(opts.Transport)
		c.ownHTTP = hc
	}
	copts := []connect.ClientOption{
		// IDs barely compress and gzip costs more than the bytes it saves on a LAN.
		connect.WithAcceptCompression("gzip", nil, nil),
		connect.WithCodec(codec{}),
	}
	if opts.Transport == GRPC {
		copts = append(copts, connect.WithGRPC())
	}
	seen := make(map[string]bool)
	tiers := append([]Region{{Servers: opts.Servers}}, opts.Remote...)
	for tier, r := range tiers {
		if tier > 0 && len(r.Servers) == 0 {
			return nil, fmt.Errorf("client: remote region %d (%q) has no server; give each Region at least one", tier, r.Name)
		}
		for _, s := range r.Servers {
			u, err := normalizeServer(s)
			if err != nil {
				return nil, err
			}
			if seen[u] {
				return nil, fmt.Errorf("client: server %s is listed twice", u)
			}
			seen[u] = true
			c.servers = append(c.servers, &server{url: u, idx: len(c.servers), tier: tier, region: r.Name,
				rpc: flurryv1connect.NewIDServiceClient(hc, u, copts...)})
		}
	}
	c.tiers = len(tiers)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	empty := map[string]*Namespace{}
	c.namespaces.Store(&empty)
	return c, nil
}

func maps(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// newHTTPClient returns an HTTP client with keep-alive sized for many concurrent
// requests and, for GRPC, HTTP/2 with and without TLS.
func newHTTPClient(t Transport) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 256
	if t == GRPC {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
		// A 100,000-ID answer is 800 KB: in the default 16 KB frames a Go server
		// writes it as 50 frames, each a hand-off between goroutines and a
		// syscall. 1 MiB frames may carry it whole; the windows let it go
		// unblocked. The server's context switches per request about halve.
		tr.HTTP2 = &http.HTTP2Config{MaxReadFrameSize: 1 << 20, MaxReceiveBufferPerStream: 4<<20 - 1, MaxReceiveBufferPerConnection: 4<<20 - 1}
	}
	return &http.Client{Transport: tr}
}

// Next returns an ID of the namespace, from its buffer when it holds one (no
// network, no allocation), else after waiting for a refill, which ctx bounds. See
// the package documentation for the order of the IDs and the errors.
func (c *Client) Next(ctx context.Context, namespace string) (flurry.ID, error) {
	v, err := c.Namespace(namespace).ints.next(ctx)
	return flurry.ID(v), err
}

// NextText returns a text ID (uuidv7, objectid) of the namespace, buffered as Next
// does.
func (c *Client) NextText(ctx context.Context, namespace string) (string, error) {
	return c.Namespace(namespace).texts.next(ctx)
}

// Namespace returns the handle of a namespace, whose Next skips the lookup by name.
// Handles are cached: every call with one name returns the same handle.
func (c *Client) Namespace(name string) *Namespace {
	if ns, ok := (*c.namespaces.Load())[name]; ok {
		return ns
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.namespaces.Load()
	if ns, ok := old[name]; ok {
		return ns
	}
	ns := &Namespace{name: name}
	ns.ints = newBuffer(c, ns, takeInts)
	ns.texts = newBuffer(c, ns, takeTexts)
	if c.closed {
		ns.ints.closed, ns.texts.closed = true, true
	}
	m := make(map[string]*Namespace, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = ns
	c.namespaces.Store(&m)
	return ns
}

// Fetch asks a server for count IDs of the namespace, with failover, bypassing the
// buffer: ids for integer namespaces, text for text ones. count is at most the
// servers' max_count (100,000 unless configured).
func (c *Client) Fetch(ctx context.Context, namespace string, count int) (ids []flurry.ID, text []string, err error) {
	if count < 1 || count > 1<<31 {
		return nil, nil, fmt.Errorf("client: count %d is out of range; ask for 1 or more: %w", count, ErrInvalidArgument)
	}
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	resp, err := nextRPC(c, ctx, namespace, count, func(m *flurryv1.NextResponse) (*flurryv1.NextResponse, error) { return m, nil })
	if err != nil {
		return nil, nil, err
	}
	if len(resp.Ids) > 0 {
		ids = make([]flurry.ID, len(resp.Ids))
		for i, v := range resp.Ids {
			ids[i] = flurry.ID(v)
		}
	}
	return ids, resp.TextIds, nil
}

// Decode asks a server to split an ID of the namespace into its time and fields,
// with failover.
func (c *Client) Decode(ctx context.Context, namespace, id string) (Decoded, error) {
	if c.isClosed() {
		return Decoded{}, ErrClosed
	}
	out, err := failover(c, ctx, namespace, func(ctx context.Context, s *server) (*flurryv1.DecodeResponse, error) {
		req := connect.NewRequest(&flurryv1.DecodeRequest{Namespace: namespace, Id: id})
		c.auth(req.Header(), namespace)
		resp, err := s.rpc.Decode(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	})
	if err != nil {
		return Decoded{}, withCall(err, "Decode")
	}
	return decoded(out), nil
}

// Info asks a server to describe its namespaces (all when namespace is empty), with
// failover. A server shows only the namespaces the client's token opens.
func (c *Client) Info(ctx context.Context, namespace string) (Info, error) {
	if c.isClosed() {
		return Info{}, ErrClosed
	}
	out, err := failover(c, ctx, namespace, func(ctx context.Context, s *server) (*flurryv1.InfoResponse, error) {
		req := connect.NewRequest(&flurryv1.InfoRequest{Namespace: namespace})
		c.auth(req.Header(), namespace)
		resp, err := s.rpc.Info(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	})
	if err != nil {
		return Info{}, withCall(err, "Info")
	}
	return info(out)
}

// Close stops the background refills, waits for them, and drops every buffered ID:
// IDs fetched but not yet returned are lost (never handed out later or twice).
// Calls after Close return ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, ns := range *c.namespaces.Load() {
		ns.ints.close()
		ns.texts.close()
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	if c.ownHTTP != nil {
		c.ownHTTP.CloseIdleConnections()
	}
	return nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// ServerStats describes one server as the client sees it.
type ServerStats struct {
	URL string
	// Region is the name of the server's remote region (Options.Remote); empty
	// for the local region's servers.
	Region   string
	Requests int64 // requests sent, hedges included
	Failures int64 // of which failed (refused, timed out, UNAVAILABLE)
	// Hedges counts the requests sent to this server as hedges, because the
	// server asked before it had not answered within its hedge delay.
	// HedgesWon counts those whose answer was the one used.
	Hedges    int64
	HedgesWon int64
	// OutHedged counts the requests to this server that were cancelled because
	// a hedge to another server answered first. Each passes the server over as
	// a failure does, without counting in Failures.
	OutHedged int64
	// HedgeDelay is how long a request to this server waits for its answer
	// before it is hedged (see Options.HedgeMinDelay); zero with NoHedge.
	HedgeDelay time.Duration
	DownUntil  time.Time // passed over until then; zero when in use
	LastError  error     // the last failure (or out-hedged request), nil after a success
}

// Stats returns the servers' counters, in the order of Options.Servers, then
// of each Options.Remote region.
func (c *Client) Stats() []ServerStats {
	out := make([]ServerStats, len(c.servers))
	for i, s := range c.servers {
		s.mu.Lock()
		out[i] = ServerStats{
			URL: s.url, Region: s.region, Requests: s.requests.Load(), Failures: s.failures.Load(),
			Hedges: s.hedges.Load(), HedgesWon: s.hedgesWon.Load(), OutHedged: s.outHedged.Load(), HedgeDelay: c.hedgeDelay(s),
			DownUntil: s.downUntil, LastError: s.lastErr,
		}
		s.mu.Unlock()
	}
	return out
}

// auth sets the bearer token of the namespace, if any.
func (c *Client) auth(h http.Header, namespace string) {
	tok, ok := c.tokens[namespace]
	if !ok {
		tok = c.token
	}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
}

// nextRPC asks for count IDs with failover and hedging. take vets a response and
// returns what the caller keeps of it; an error from it counts as that server's
// failure (or, for a wrongKind, as a refusal). Each request's response is its own:
// only the winner's reaches the caller.
func nextRPC[T any](c *Client, ctx context.Context, namespace string, count int, take func(*flurryv1.NextResponse) (T, error)) (T, error) {
	return failover(c, ctx, namespace, func(ctx context.Context, s *server) (T, error) {
		var zero T
		if err := c.vet(ctx, namespace, s.idx); err != nil {
			return zero, err
		}
		req := connect.NewRequest(&flurryv1.NextRequest{Namespace: namespace, Count: uint32(count), PackedIds: true})
		c.auth(req.Header(), namespace)
		resp, err := s.rpc.Next(ctx, req)
		if err != nil {
			return zero, err
		}
		if err := unpack(resp.Msg); err != nil {
			return zero, err
		}
		if err := validate(resp.Msg, count); err != nil {
			return zero, err
		}
		return take(resp.Msg)
	})
}

// unpack moves a response's packed_ids into its ids, so that the rest of the
// client reads one field whatever the server's age: a server that knows the field
// answers in it, an older one in ids. Both at once is refused.
func unpack(m *flurryv1.NextResponse) error {
	if len(m.PackedIds) == 0 {
		return nil
	}
	if len(m.Ids) > 0 {
		return errBothIDs
	}
	ids, err := unpackIDs(m.PackedIds)
	if err != nil {
		return err
	}
	m.Ids, m.PackedIds = ids, nil
	return nil
}

var errBothIDs = errors.New("server answered with both ids and packed_ids")

// unpackIDs decodes packed_ids: 8 bytes per ID, little-endian.
func unpackIDs(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("server answered with %d bytes of packed_ids, not a multiple of 8", len(b))
	}
	ids := make([]int64, len(b)/8)
	for i := range ids {
		ids[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return ids, nil
}

// validate refuses a response that breaks the contract: no IDs, more than asked,
// or integer IDs that are negative or not strictly increasing (a duplicate would
// be one).
func validate(m *flurryv1.NextResponse, count int) error {
	n := len(m.Ids) + len(m.TextIds)
	switch {
	case n == 0:
		return errors.New("server answered with no IDs")
	case n > count:
		return fmt.Errorf("server answered with %d IDs for %d asked", n, count)
	}
	prev := int64(-1)
	for _, v := range m.Ids {
		if v <= prev {
			return fmt.Errorf("server answered with IDs out of order or repeated (%d after %d)", v, prev)
		}
		prev = v
	}
	return nil
}

// failover runs call against the servers in failover order (see order) and returns
// the first answer. A server that fails makes the next one asked at once. A server
// that has not answered within its hedge delay makes the next one asked too (a
// hedge), its own request still running: the first answer wins, and the requests
// still running are cancelled, their answers dropped. Those asked before the
// winner were out-hedged and are passed over as failed ones are. failover returns
// a refusal that another server would repeat (unknown namespace, token, invalid
// argument, wrong kind) at once; ctx's error when ctx ends; else, once every
// server failed, an *Error with every attempt in the order they were made.
//
// Each request runs in a goroutine of its own and hands back its own answer, so
// two requests' results never mix; a cancelled loser's goroutine ends on its own.
func failover[T any](c *Client, ctx context.Context, namespace string, call func(context.Context, *server) (T, error)) (T, error) {
	var zero T
	order := c.order(time.Now())
	n := len(order)
	type result struct {
		k   int // the request's index in order
		v   T
		err error
		rtt time.Duration
	}
	results := make(chan result, n) // a loser's answer never blocks its goroutine
	type request struct {
		start   time.Time
		hedge   bool // sent as a hedge
		running bool // no answer yet
	}
	var (
		reqs     = make([]request, n)
		cancels  = make([]context.CancelFunc, 0, n)
		attempts []Attempt // made at the first failure
		inflight int
		timer    *time.Timer
		hedgeC   <-chan time.Time
	)
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
		if timer != nil {
			timer.Stop()
		}
	}()
	launch := func(asHedge bool) {
		k := len(cancels)
		s := c.servers[order[k]]
		rctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
		cancels = append(cancels, cancel)
		reqs[k] = request{start: time.Now(), hedge: asHedge, running: true}
		start := reqs[k].start
		inflight++
		s.requests.Add(1)
		if asHedge {
			s.hedges.Add(1)
		}
		go func() {
			v, err := call(rctx, s)
			rtt := time.Since(start)
			if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errTimeout) {
				// Not wrapping err keeps context.DeadlineExceeded for the
				// caller's own deadline: errors.Is(err,
				// context.DeadlineExceeded) on what Next returns means the
				// caller's ctx ended, not that one server was slow.
				err = fmt.Errorf("no answer within %v (Options.Timeout; %v)", c.timeout, err)
			}
			results <- result{k: k, v: v, err: err, rtt: rtt}
		}()
		hedgeC = nil
		// A hedge stays in the server's region: another region is asked only
		// when this one's servers failed.
		if d := c.hedgeDelay(s); d > 0 && k+1 < n && c.servers[order[k+1]].tier == s.tier {
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			hedgeC = timer.C
		}
	}
	launch(false)
	for {
		select {
		case r := <-results:
			reqs[r.k].running = false
			inflight--
			s := c.servers[order[r.k]]
			if r.err == nil {
				s.lat.record(r.rtt)
				s.ok()
				if reqs[r.k].hedge {
					s.hedgesWon.Add(1)
				}
				c.last.Store(int32(order[r.k]))
				now := time.Now()
				for k, q := range reqs[:r.k] {
					if q.running {
						c.servers[order[k]].outHedge(s.url, now.Sub(q.start), c.backoff, c.maxBackoff)
					}
				}
				return r.v, nil
			}
			if ctx.Err() != nil {
				return zero, fmt.Errorf("client: namespace %q: %w", namespace, ctx.Err())
			}
			if ref := refusal(r.err, namespace, s.url); ref != nil {
				return zero, ref
			}
			s.fail(r.err, c.backoff, c.maxBackoff)
			if attempts == nil {
				attempts = make([]Attempt, n)
			}
			attempts[r.k] = Attempt{Server: s.url, Err: r.err}
			switch {
			case len(cancels) < n:
				launch(false)
			case inflight == 0:
				return zero, &Error{Namespace: namespace, Attempts: attempts}
			}
		case <-hedgeC:
			launch(true)
		case <-ctx.Done():
			return zero, fmt.Errorf("client: namespace %q: %w", namespace, ctx.Err())
		}
	}
}

// order returns the servers' indexes in failover order: those in use, region by
// region (the local one first, then Options.Remote's in order), in each starting
// from the last that answered; then those passed over (after a failure or an
// out-hedged request), local ones first, soonest back first. A call never gives
// up without asking each server once, and a hedge may go to a server passed over
// when every other one of its region is slow.
func (c *Client) order(now time.Time) []int {
	n := len(c.servers)
	start := int(c.last.Load())
	out := make([]int, 0, n)
	var later []int
	for tier := range c.tiers {
		for k := range n {
			i := (start + k) % n
			if c.servers[i].tier != tier {
				continue
			}
			if c.servers[i].isDown(now) {
				later = append(later, i)
				continue
			}
			out = append(out, i)
		}
	}
	slices.SortStableFunc(later, func(a, b int) int {
		if ta, tb := c.servers[a].tier, c.servers[b].tier; ta != tb {
			return ta - tb
		}
		return c.servers[a].until().Compare(c.servers[b].until())
	})
	return append(out, later...)
}

var errTimeout = errors.New("client: request timed out")

// RefusedError is returned when a server refuses a request for a reason that
// another server would repeat, so the client does not fail over: an unknown
// namespace, a refused token, an invalid request, or the wrong kind of ID. It
// matches the sentinel of its reason (ErrUnknownNamespace, ErrUnauthenticated,
// ErrInvalidArgument, ErrWrongKind) with [errors.Is] and unwraps to the server's
// error.
type RefusedError struct {
	Namespace string
	Server    string
	Reason    error // one of the sentinels above
	Err       error // the server's answer, usually a *connect.Error
}

// Error says who refused what, and what to do.
func (e *RefusedError) Error() string {
	hint := ""
	switch e.Reason {
	case ErrUnknownNamespace:
		hint = "; check the namespace's name and the server's configuration"
	case ErrUnauthenticated:
		hint = "; pass a token the namespace accepts (Options.Token, --token)"
	case ErrInvalidArgument:
		hint = "; ask for fewer IDs at once (Options.Batch, -n) or fix the request"
	case ErrWrongKind:
		hint = "; use NextText for uuidv7 and objectid namespaces, Next for the others"
	}
	return fmt.Sprintf("%v: namespace %q on %s: %v%s", e.Reason, e.Namespace, e.Server, e.Err, hint)
}

// Is reports whether target is the reason's sentinel.
func (e *RefusedError) Is(target error) bool { return target == e.Reason }

// Unwrap returns the server's answer.
func (e *RefusedError) Unwrap() error { return e.Err }

// wrongKind is what a check returns for a response of the other kind of ID.
type wrongKind struct{ msg string }

func (w *wrongKind) Error() string { return w.msg }

// refusal returns the error to give the caller at once when err is a refusal that
// failover cannot fix, else nil.
func refusal(err error, namespace, url string) error {
	if me, ok := errors.AsType[*MixError](err); ok {
		return me
	}
	if wk, ok := errors.AsType[*wrongKind](err); ok {
		return &RefusedError{Namespace: namespace, Server: url, Reason: ErrWrongKind, Err: wk}
	}
	var reason error
	switch connect.CodeOf(err) {
	case connect.CodeNotFound:
		reason = ErrUnknownNamespace
	case connect.CodeUnauthenticated, connect.CodePermissionDenied:
		reason = ErrUnauthenticated
	case connect.CodeInvalidArgument, connect.CodeOutOfRange:
		reason = ErrInvalidArgument
	default:
		return nil
	}
	return &RefusedError{Namespace: namespace, Server: url, Reason: reason, Err: err}
}

func (s *server) isDown(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Before(s.downUntil)
}

func (s *server) until() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downUntil
}

func (s *server) ok() {
	s.mu.Lock()
	s.inARow, s.downUntil, s.lastErr = 0, time.Time{}, nil
	s.mu.Unlock()
}

// fail marks the server down after a failed request (see down).
func (s *server) fail(err error, base, maxd time.Duration) {
	s.failures.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down(base, maxd)
	s.lastErr = err
}

// outHedge marks the server down as fail does, for a request of it that a hedge to
// winner answered first after it had run for waited. It counts in OutHedged, not
// Failures: the server did not fail, it did not answer in time.
func (s *server) outHedge(winner string, waited, base, maxd time.Duration) {
	s.outHedged.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down(base, maxd)
	s.lastErr = fmt.Errorf("no answer within %v; a hedge to %s answered first", waited.Round(time.Microsecond), winner)
}

// down passes the server over for base·2^(failures in a row - 1), capped at max,
// less a random jitter of up to half, so clients that saw one outage do not all
// come back at the same instant. s.mu is held.
func (s *server) down(base, maxd time.Duration) {
	s.inARow++
	d := base
	for i := 1; i < s.inARow && d < maxd; i++ {
		d *= 2
	}
	d = min(d, maxd)
	d -= time.Duration(rand.Int64N(int64(d)/2 + 1))
	s.downUntil = time.Now().Add(d)
}
