package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry"
	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
)

// testLayout is the server's default layout: 16 sequence bits, so one node issues
// up to 65.5 million IDs a second and the server is not what a benchmark measures.
const testLayout = "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16"

// Modes of a testService.
const (
	modeOK          = iota
	modeUnavailable // every Next answers UNAVAILABLE, as a fenced namespace does
	modeHang        // every Next blocks until its context ends
)

// testService implements IDService over a real snowflake.Generator, with the
// server's error codes: namespace "default" issues integers, "text" text IDs (the
// generator's IDs as 16 hex digits), others are unknown.
type testService struct {
	flurryv1connect.UnimplementedIDServiceHandler
	gen      *snowflake.Generator
	token    string // required when not empty
	maxCount uint32
	mode     atomic.Int32
	calls    atomic.Int64
	inflight atomic.Int64  // Next calls running now
	maxIn    atomic.Int64  // the most Next calls that ran at once
	maxAsked atomic.Int64  // the largest count asked for
	release  chan struct{} // closed when the test ends, to let hung calls return
}

func (s *testService) auth(h http.Header) error {
	if s.token != "" && h.Get("Authorization") != "Bearer "+s.token {
		return connect.NewError(connect.CodeUnauthenticated, errors.New("missing or wrong bearer token"))
	}
	return nil
}

func (s *testService) Next(ctx context.Context, req *connect.Request[flurryv1.NextRequest]) (*connect.Response[flurryv1.NextResponse], error) {
	s.calls.Add(1)
	in := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.maxIn.Load(); in > m && !s.maxIn.CompareAndSwap(m, in); m = s.maxIn.Load() {
	}
	for m := s.maxAsked.Load(); int64(req.Msg.Count) > m && !s.maxAsked.CompareAndSwap(m, int64(req.Msg.Count)); m = s.maxAsked.Load() {
	}
	switch s.mode.Load() {
	case modeUnavailable:
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("namespace fenced: lease lost; retry in 1s"))
	case modeHang:
		// A hung server: no answer, whatever the request's deadline says.
		<-s.release
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("released"))
	}
	if err := s.auth(req.Header()); err != nil {
		return nil, err
	}
	ns, count := req.Msg.Namespace, req.Msg.Count
	if ns != "default" && ns != "text" {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown namespace %q", ns))
	}
	if count == 0 {
		count = 1
	}
	if count > s.maxCount {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("count %d is above max_count %d", count, s.maxCount))
	}
	ids := make([]flurry.ID, count)
	if _, err := s.gen.NextN(ctx, ids); err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	resp := &flurryv1.NextResponse{Namespace: ns}
	for _, id := range ids {
		if ns == "text" {
			resp.TextIds = append(resp.TextIds, fmt.Sprintf("%016x", int64(id)))
		} else {
			resp.Ids = append(resp.Ids, int64(id))
		}
	}
	return connect.NewResponse(resp), nil
}

// testServer is a running testService.
type testServer struct {
	*httptest.Server
	svc *testService
}

var testNode atomic.Int64

// newTestServer starts an IDService on loopback, speaking HTTP/1.1 and h2c, with a
// generator of a node value of its own.
func newTestServer(t testing.TB) *testServer {
	t.Helper()
	l, err := layout.Parse(testLayout)
	if err != nil {
		t.Fatal(err)
	}
	node := testNode.Add(1) % 64
	g, err := snowflake.New(snowflake.Options{Layout: l, Node: layout.NodeValues{node}, Namespace: "client-test-" + t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	svc := &testService{gen: g, maxCount: 100_000, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle(flurryv1connect.NewIDServiceHandler(svc))
	srv := httptest.NewUnstartedServer(mux)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	ts := &testServer{Server: srv, svc: svc}
	t.Cleanup(func() {
		close(svc.release)
		srv.CloseClientConnections()
		srv.Close()
		g.Close()
	})
	return ts
}

// kill stops the server as a crash would: open connections are cut. Not for a
// server in modeHang (Close waits for its hung calls).
func (s *testServer) kill() {
	s.CloseClientConnections()
	s.Close()
}

// newTestClient returns a client of the servers, closed when the test ends.
func newTestClient(t testing.TB, opts Options, servers ...*testServer) *Client {
	t.Helper()
	for _, s := range servers {
		opts.Servers = append(opts.Servers, s.URL)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func hexID(s string) bool {
	return len(s) == 16 && strings.Trim(s, "0123456789abcdef") == ""
}
