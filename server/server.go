// Package server is `flurry serve`: it holds the configured namespaces (snowflake
// generators with leased node values, segment allocators, Redis generators) and
// serves them over HTTP.
//
// One http.Handler serves:
//
//   - the IDService of api/proto/flurry/v1/flurry.proto through connect-go, which
//     answers gRPC, gRPC-Web and Connect (HTTP/JSON) on the same paths;
//   - plain GET routes for curl and for the fastest path:
//     GET /v1/{namespace}/next?count=N[&format=number|text],
//     GET /v1/{namespace}/decode/{id} and GET /v1/info;
//   - Meituan Leaf's routes, so Leaf clients keep working:
//     GET /api/segment/get/{key}, GET /api/snowflake/get/{key},
//     GET /decodeSnowflakeId?snowflakeId=, /cache, /db; with a leaf: section,
//     every tag of a Leaf table (tagset.go, leafcompat.go);
//   - with a tinyid: section, didi tinyid's routes on tinyid's tables
//     ({prefix}/id/nextId, nextIdSimple, nextSegmentId, nextSegmentIdSimple; tinyid.go);
//   - /metrics (Prometheus), /healthz and /readyz.
//
// The engines a server reaches are the packages its program imports, which
// register themselves as database/sql drivers do: the store packages of the
// lease and segment URLs (lease/sqlstore, segment/etcdstore, ...; leaseurl,
// segmenturl) and, for redis namespaces, server/redisstrategy. A namespace or URL
// whose engine the program lacks is refused with the import to add. The file
// stores are always there.
//
// See docs/server.md for the routes, their exact bodies and error statuses.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server/config"
)

// Options configures a Server.
type Options struct {
	// Config is the configuration, already checked (config.Load or Check). Nil
	// means config.Default().
	Config *config.Config
	// OpenLeaseStore opens a lease store by URL. Nil means leaseurl.Open.
	OpenLeaseStore func(ctx context.Context, url string) (lease.Store, error)
	// OpenSegmentStore opens a segment store by URL. Nil means segmenturl.Open.
	OpenSegmentStore func(ctx context.Context, url string) (segment.Store, error)
	// Logger receives the server's and the stores' messages. Nil means slog.Default().
	Logger *slog.Logger
	// Version is reported by Info.
	Version string
	// Clock is the generators' clock. Nil means clock.NewSystem().
	Clock clock.Clock
	// Listening is the address the server will serve on (flurry serve's
	// listener), given to the lease stores that ask for it (a store with a
	// SetListening(net.Addr) method, such as lease/leafzk's, which then knows
	// its own address in Leaf's registry). Nil tells them nothing.
	Listening net.Addr
}

// ServerHeader is the response header, "Flurry-Server: flurry", with which GET
// /v1/info and Leaf's route /api/snowflake/get/{key} say that a flurry server
// answers: lease/leafzk asks a Leaf node's address before it takes the node's
// worker ID, and takes every other answer for a running Leaf server's.
const ServerHeader = "Flurry-Server"

func (o *Options) openLease(ctx context.Context, url string) (lease.Store, error) {
	if o.OpenLeaseStore != nil {
		return o.OpenLeaseStore(ctx, url)
	}
	return leaseurl.Open(ctx, url)
}

func (o *Options) openSegment(ctx context.Context, url string) (segment.Store, error) {
	if o.OpenSegmentStore != nil {
		return o.OpenSegmentStore(ctx, url)
	}
	return segmenturl.Open(ctx, url)
}

// textStrategies makes the sources of the text strategies (uuidv7, objectid) by name.
func (o *Options) textStrategies() map[string]func(ctx context.Context) (textSource, error) {
	return builtinText(o.Clock)
}

// Server holds the namespaces and serves them. Make one with New; Close it (or let
// Serve close it) to hand segment ranges back and release leases.
type Server struct {
	opts     Options
	cfg      *config.Config
	log      *slog.Logger
	started  time.Time
	instance string // random, made by New: info's instance
	maxCount int
	maxBody  int64
	shutdown time.Duration

	readTimeout, writeTimeout time.Duration // limits.read_timeout, write_timeout

	namespaces map[string]*namespace
	order      []*namespace
	segByTag   map[string]*namespace

	// Leaf's and tinyid's modes (tagset.go, leafcompat.go, tinyid.go)
	compat   compatHeaders
	leafTags *tagSet
	tiny     *tinyServer
	spring   []springRoute // Leaf's and tinyid's routes as Spring matches them

	handler http.Handler
	metrics *metrics

	bufs   sync.Pool // *[]byte, response buffers
	idBufs sync.Pool // *[]flurry.ID
	// packBufs holds the packed_ids of RPC answers (*[]byte, 8 bytes per ID),
	// given back once connect has written the answer (rpcHold).
	packBufs sync.Pool

	admin     *tokenSet // access.admin_tokens
	protected bool      // some namespace or the admin views need a token
	budget    budget    // limits.max_ids_in_flight

	// header values shared by every response (never modified)
	ctJSON, ctText, retryAfter1, bearer, bearerInvalid []string
	// flurryServer is the value of ServerHeader.
	flurryServer []string

	tlsConfig *tls.Config

	region *regionGuard // nil outside a region

	closeOnce sync.Once
	closeErr  error
}

// New builds every namespace of the configuration (leasing node values, taking
// first segment ranges, connecting to Redis) and returns a server for them. If any
// namespace fails, it closes those already built and returns the error: a server
// never half-starts.
func New(ctx context.Context, opts Options) (*Server, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
		if err := cfg.Check(nil); err != nil {
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewSystem()
	}
	s := &Server{
		opts: opts, cfg: cfg, log: opts.Logger, started: time.Now(),
		instance: storeid.Random(),
		maxCount: cfg.MaxCount, maxBody: cfg.MaxBodyBytes,
		shutdown:   cfg.ShutdownTimeout.Or(config.DefaultShutdown),
		namespaces: map[string]*namespace{}, segByTag: map[string]*namespace{},
		ctJSON: []string{"application/json"}, ctText: []string{"text/plain; charset=utf-8"},
		retryAfter1: []string{"1"}, bearer: []string{`Bearer realm="flurry"`},
		bearerInvalid: []string{`Bearer realm="flurry", error="invalid_token"`},
		flurryServer:  []string{"flurry"},
	}
	s.readTimeout = cfg.Limits.ReadTimeout.Or(config.DefaultReadTimeout)
	s.writeTimeout = cfg.Limits.WriteTimeout.Or(config.DefaultWriteTimeout)
	s.budget.max = int64(cfg.Limits.MaxIDsInFlight)
	if s.budget.max == 0 {
		s.budget.max = config.DefaultMaxIDsInFlight
	}
	lim := newLimiter(cfg.Limits)
	s.admin = newTokenSet(cfg.Access.ResolvedAdmin, lim)
	s.protected = !s.admin.empty()
	if s.maxCount == 0 {
		s.maxCount = config.DefaultMaxCount
	}
	if s.maxBody == 0 {
		s.maxBody = config.DefaultMaxBody
	}
	if cfg.TLS.Cert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLS.Cert, cfg.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("loading TLS certificate %s and key %s: %w; give PEM files (tls: cert, key or --tls-cert, --tls-key)", cfg.TLS.Cert, cfg.TLS.Key, err)
		}
		s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if cfg.TLS.ClientCA != "" {
			pem, err := os.ReadFile(cfg.TLS.ClientCA)
			if err != nil {
				return nil, fmt.Errorf("reading the client CA file: %w; give a PEM file of CA certificates (tls: client_ca)", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("the client CA file %s holds no PEM certificate; give the CA certificates that sign the clients' certificates", cfg.TLS.ClientCA)
			}
			s.tlsConfig.ClientCAs = pool
			s.tlsConfig.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	s.idBufs.New = func() any { b := make([]flurry.ID, 0, pieceInts); return &b }
	b := &builder{opts: &s.opts, dataDir: cfg.ResolveData(), clock: opts.Clock}
	g, err := s.startRegion(ctx, b)
	if err != nil {
		return nil, err
	}
	s.region, b.region = g, cfg.Region
	for _, name := range cfg.Order {
		c := cfg.Namespaces[name]
		ns, err := b.build(ctx, name, c)
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			s.closeNamespaces(cctx)
			cancel()
			s.region.close()
			return nil, err
		}
		s.namespaces[name] = ns
		s.order = append(s.order, ns)
		s.readIdentities(ctx, ns)
		ns.tokens = newTokenSet(c.Resolved, lim)
		s.protected = s.protected || !ns.tokens.empty()
		ns.maxCount = c.MaxCount
		if ns.maxCount == 0 {
			ns.maxCount = s.maxCount
		}
		ns.piece = pieceInts
		if ns.text != nil {
			ns.piece = pieceText
		}
		if c.Strategy == "segment" {
			tag := c.Segment.Tag
			if tag == "" {
				tag = name
			}
			if _, dup := s.segByTag[tag]; !dup {
				s.segByTag[tag] = ns
			}
		}
	}
	s.compat = newCompatHeaders()
	if err := s.buildCompat(ctx, b); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		s.closeNamespaces(cctx)
		cancel()
		s.region.close()
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.spring = s.springRoutes()
	s.handler = s.cors(cfg.CORS, s.routes())
	return s, nil
}

// Handler returns the server's HTTP handler: every route.
func (s *Server) Handler() http.Handler { return s.handler }

// Namespaces returns the names of the namespaces, in configuration order.
func (s *Server) Namespaces() []string {
	out := make([]string, len(s.order))
	for i, ns := range s.order {
		out[i] = ns.name
	}
	return out
}

// Close hands unused segment ranges back, releases leases and closes the stores.
// The server must not serve any more. Close is idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.closeErr = s.closeNamespaces(ctx)
		s.region.close()
	})
	return s.closeErr
}

func (s *Server) closeNamespaces(ctx context.Context) error {
	errs := []error{s.closeCompat(ctx)}
	for i := len(s.order) - 1; i >= 0; i-- {
		if err := s.order[i].close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets requests in flight finish (up to the configured
// shutdown_timeout), then closes the server (Close). With TLS configured it serves
// HTTPS; without, HTTP/1.1 and HTTP/2 without TLS (h2c, for gRPC).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	protos.SetUnencryptedHTTP2(true)
	lim := s.cfg.Limits
	streams := lim.MaxConcurrentStreams
	if streams == 0 {
		streams = config.DefaultMaxStreams
	}
	hs := &http.Server{
		Handler:   s.handler,
		Protocols: &protos,
		// Everything a client controls is bounded in time: the headers, the
		// whole request with its body (a body that trickles is cut), the whole
		// response (a client that does not read), idle keep-alives.
		// response (a client that does not read), idle keep-alives. The body and
		// response deadlines are set per request (recoverer, limits.read_timeout
		// and write_timeout), so that the hot path arms no timer.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: streams},
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.tlsConfig != nil {
		hs.TLSConfig = s.tlsConfig.Clone()
	}
	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			errc <- hs.ServeTLS(ln, "", "")
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.shutdown)
	defer cancel()
	shutErr := hs.Shutdown(sctx)
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	// Handing ranges back and releasing leases gets time of its own, also when
	// the requests used up shutdown_timeout.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer ccancel()
	closeErr := s.Close(cctx)
	if shutErr != nil {
		shutErr = fmt.Errorf("requests still running after shutdown_timeout %v were cut off: %w", s.shutdown, shutErr)
	}
	return errors.Join(serveErr, shutErr, closeErr)
}

// TLS reports whether the server serves HTTPS.
func (s *Server) TLS() bool { return s.cfg.TLS.Cert != "" }

// Terms of MemoryCeiling, measured with `flurry serve` on linux/amd64
// (TestServeAbuse in cmd/flurry, docs/benchmarks.md).
const (
	// memoryBase covers the binary, the runtime, the drivers, the stores'
	// connection pools and the namespaces' state.
	memoryBase = 64 << 20
	// memoryPerID covers one ID of the budget held by the costliest path: an
	// RPC answer of text IDs (uuidv7) as Connect JSON, built whole (the strings,
	// the encoder's growing buffer) plus the garbage collector's headroom.
	memoryPerID = 320
	// MemoryPerConn is what one open connection adds (buffers, goroutines, an
	// HTTP/2 connection's streams); docs/security.md adds it per connection.
	MemoryPerConn = 64 << 10
)

// MemoryCeiling returns the most memory, in bytes, the server of cfg is meant
// to use apart from its open connections:
//
//	64 MiB + limits.max_ids_in_flight × 320 B
//
// plus MemoryPerConn per open connection. flurry serve sets it as the runtime's
// soft memory limit (debug.SetMemoryLimit) so the collector keeps the heap under
// it; the IDs budget keeps what requests hold live under it.
func MemoryCeiling(cfg *config.Config) int64 {
	n := int64(cfg.Limits.MaxIDsInFlight)
	if n == 0 {
		n = config.DefaultMaxIDsInFlight
	}
	return memoryBase + n*memoryPerID
}
