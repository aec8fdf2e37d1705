package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// How -mode client groups a caller's calls into ops. A run of calls that each
// returned at once from the buffer, from one node, is one op (up to groupIDs IDs or
// groupAge long); a call that waited slowCall or more, or the first that succeeded
// after a failure, is an op of its own, so that its wait is End - Start; a failed
// call is an op of its own with the error's class. The harness reads a caller's
// longest wait for an ID from these ops.
const (
	groupIDs = 1000
	groupAge = time.Second
	slowCall = 10 * time.Millisecond
	// maxBatches bounds the batches a tracer remembers per namespace and Client:
	// only batches the client refused (or dropped on Close) stay unused.
	maxBatches = 4096
)

// runClient is -mode client: cfg.clients Clients, each listing every node (in an
// order rotated per Client and per -seed, so that they do not all start on one),
// each with cfg.workers callers per namespace. Every Client's transport is a tracer
// that notes which node answered each batch, since the client does not say where
// a buffered ID came from; the checker needs the node for its per-node order check.
func runClient(ctx context.Context, cfg config, w *writer) error {
	var left atomic.Int64
	left.Store(cfg.maxReq)
	callers := cfg.clients * cfg.workers * len(cfg.nss)
	var wg sync.WaitGroup
	var clients []*client.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for k := 0; k < cfg.clients; k++ {
		servers := serverOrder(cfg.urls, cfg.local, cfg.seed+uint64(k))
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.Proxy = nil // the nodes are reached directly, whatever the environment says
		base.MaxIdleConnsPerHost = 64
		tr, err := newTracer(cfg.names, cfg.urls, base)
		if err != nil {
			return err
		}
		// The documented defaults: adaptive Batch and LowWater, Timeout 2 s.
		// With -local, the region's own servers are Servers and the others one
		// remote region: the client leaves its region only when every local server
		// has failed, and comes back once their backoff has passed.
		opts := client.Options{Servers: servers, HTTPClient: &http.Client{Transport: tr}}
		if cfg.local > 0 && cfg.local < len(servers) {
			opts.Servers = servers[:cfg.local]
			opts.Remote = []client.Region{{Name: "remote", Servers: servers[cfg.local:]}}
		}
		c, err := client.New(opts)
		if err != nil {
			return err
		}
		clients = append(clients, c)
		for _, ns := range cfg.nss {
			for i := 0; i < cfg.workers; i++ {
				var pace *pacer
				if cfg.rate > 0 {
					pace = newPacer(cfg.rate / float64(callers))
				}
				cl := &caller{name: fmt.Sprintf("%s-go%d.%d", cfg.name, k, i), ns: c.Namespace(ns), tr: tr, w: w, timeout: cfg.timeout}
				wg.Go(func() { cl.run(ctx, &left, pace) })
			}
		}
	}
	wg.Wait()
	return nil
}

// serverOrder is the server list of the Client seeded with seed: the first local
// URLs (all of them when local is 0 or covers them all) rotated by the seed, so
// that the Clients do not all start on one, then the others, rotated alike. A
// Client given its own region's servers first tries them first and the other
// region's only when each of its own failed.
func serverOrder(urls []string, local int, seed uint64) []string {
	if local <= 0 || local > len(urls) {
		local = len(urls)
	}
	var out []string
	for _, group := range [][]string{urls[:local], urls[local:]} {
		if len(group) == 0 {
			continue
		}
		first := int(seed % uint64(len(group)))
		for i := range group {
			out = append(out, group[(first+i)%len(group)])
		}
	}
	return out
}

// caller is one goroutine calling Next in a loop, as an application does.
type caller struct {
	name    string
	ns      *client.Namespace
	tr      *tracer
	w       *writer
	timeout time.Duration

	cur    checker.Op // the run of calls being grouped; no IDs when none
	line   []byte
	failed bool // the last call failed
}

func (c *caller) run(ctx context.Context, left *atomic.Int64, pace *pacer) {
	defer c.flush()
	for ctx.Err() == nil && left.Add(-1) >= 0 {
		if !pace.wait(ctx) {
			return
		}
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		id, err := c.ns.Next(cctx)
		cancel()
		end := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return // cut short by the end of the run: not a call of the system's
			}
			c.flush()
			c.emit(checker.Op{Client: c.name, Node: oplog.NoNode, Namespace: c.ns.Name(), Start: start, End: end, Err: errClass(err)})
			c.failed = true
			if pace == nil {
				// Bounded backoff so a refusing cluster is not a busy loop.
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
			continue
		}
		node, asked := c.tr.lookup(c.ns.Name(), int64(id))
		alone := c.failed || end.Sub(start) >= slowCall
		c.failed = false
		if len(c.cur.IDs) > 0 && (alone || node != c.cur.Node || len(c.cur.IDs) >= groupIDs || end.Sub(c.cur.Start) >= groupAge) {
			c.flush()
		}
		if len(c.cur.IDs) == 0 {
			c.cur = checker.Op{Client: c.name, Node: node, Namespace: c.ns.Name(), Start: start, Asked: asked, IDs: c.cur.IDs[:0]}
		}
		c.cur.End = end
		c.cur.IDs = append(c.cur.IDs, int64(id))
		if asked.Before(c.cur.Asked) {
			c.cur.Asked = asked
		}
		if alone {
			c.flush()
		}
	}
}

// flush writes the run of calls being grouped, if any.
func (c *caller) flush() {
	if len(c.cur.IDs) == 0 {
		return
	}
	c.emit(c.cur)
	c.cur.IDs = c.cur.IDs[:0]
}

func (c *caller) emit(op checker.Op) {
	c.line = oplog.Append(c.line[:0], op)
	c.w.write(c.line)
}

// errClass names a failed Next by its kind, as oplog's classes name a raw
// request's: when every node refused with the same answer, that answer ("503
// namespace sfe holds no valid lease on a node value"), else each distinct
// failure, sorted, joined with " + ".
func errClass(err error) string {
	if ce, ok := errors.AsType[*client.Error](err); ok {
		var classes []string
		for _, a := range ce.Attempts {
			if c := attemptClass(a.Err); !slices.Contains(classes, c) {
				classes = append(classes, c)
			}
		}
		if len(classes) == 0 {
			return "no server tried"
		}
		slices.Sort(classes)
		return strings.Join(classes, " + ")
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "caller's deadline passed waiting for a refill"
	case errors.Is(err, client.ErrClosed):
		return "client closed"
	}
	if re, ok := errors.AsType[*client.RefusedError](err); ok {
		return "refused: " + oplog.Reason(re.Reason.Error())
	}
	return oplog.Reason(err.Error())
}

// attemptClass names one server's failure within a client.Error.
func attemptClass(err error) string {
	if strings.HasPrefix(err.Error(), "no answer within") {
		return "timeout"
	}
	// The server's own answer carries its headers; a transport failure, which
	// connect also reports as a *connect.Error, has none.
	if ce, ok := errors.AsType[*connect.Error](err); ok && (len(ce.Meta()) > 0 || strings.HasPrefix(ce.Message(), "namespace ")) {
		status := map[connect.Code]int{connect.CodeUnavailable: 503, connect.CodeResourceExhausted: 429, connect.CodeInternal: 500}[ce.Code()]
		if status == 0 {
			return ce.Code().String() + " " + oplog.Reason(ce.Message())
		}
		return fmt.Sprintf("%d %s", status, oplog.Reason(ce.Message()))
	}
	return oplog.NetClass(err)
}

// tracer is a Client's HTTP transport: it passes every request on and, for the Next
// RPC, reads the namespace asked for and the IDs answered, and remembers each batch
// with the node that answered and when it was asked, until its IDs are handed out.
type tracer struct {
	next  http.RoundTripper
	nodes map[string]string // host:port -> node name

	mu   sync.Mutex
	byNS map[string]*batches
}

type batches struct {
	mu   sync.Mutex
	list []*batch // oldest first
}

type batch struct {
	node  string
	asked time.Time
	ids   []int64 // increasing: the client refuses any other batch
	used  int
}

func newTracer(names, urls []string, next http.RoundTripper) (*tracer, error) {
	t := &tracer{next: next, nodes: map[string]string{}, byNS: map[string]*batches{}}
	for i, u := range urls {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("node %s: %q is not a base URL", names[i], u)
		}
		t.nodes[pu.Host] = names[i]
	}
	return t, nil
}

func (t *tracer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || !strings.HasSuffix(req.URL.Path, flurryv1connect.IDServiceNextProcedure) {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var in flurryv1.NextRequest
	traced := proto.Unmarshal(body, &in) == nil
	r2 := req.Clone(req.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r2.ContentLength = int64(len(body))
	asked := time.Now()
	resp, err := t.next.RoundTrip(r2)
	if err != nil || resp.StatusCode != http.StatusOK || !traced || resp.Header.Get("Content-Encoding") != "" {
		return resp, err
	}
	rb, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(rb))
	var out flurryv1.NextResponse
	if proto.Unmarshal(rb, &out) == nil {
		ids := out.Ids
		if len(out.PackedIds) > 0 && len(out.PackedIds)%8 == 0 {
			ids = make([]int64, len(out.PackedIds)/8)
			for i := range ids {
				ids[i] = int64(binary.LittleEndian.Uint64(out.PackedIds[8*i:]))
			}
		}
		if len(ids) > 0 {
			t.add(in.Namespace, t.node(req.URL.Host), asked, ids)
		}
	}
	return resp, nil
}

func (t *tracer) node(host string) string {
	if n, ok := t.nodes[host]; ok {
		return n
	}
	return host
}

func (t *tracer) ns(name string) *batches {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.byNS[name]
	if b == nil {
		b = &batches{}
		t.byNS[name] = b
	}
	return b
}

func (t *tracer) add(ns, node string, asked time.Time, ids []int64) {
	b := t.ns(ns)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.list) >= maxBatches {
		b.list = slices.Delete(b.list, 0, 1)
	}
	b.list = append(b.list, &batch{node: node, asked: asked, ids: ids})
}

// lookup returns the node that answered the batch holding id, and when it was
// asked; oplog.Untraced and the zero time when no batch holds it.
func (t *tracer) lookup(ns string, id int64) (string, time.Time) {
	b := t.ns(ns)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, bt := range b.list {
		j := sort.Search(len(bt.ids), func(k int) bool { return bt.ids[k] >= id })
		if j == len(bt.ids) || bt.ids[j] != id {
			continue
		}
		bt.used++
		if bt.used >= len(bt.ids) {
			b.list = slices.Delete(b.list, i, i+1)
		}
		return bt.node, bt.asked
	}
	return oplog.Untraced, time.Time{}
}
