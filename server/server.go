// Package server is `flurry serve`: it holds the configured namespaces (snowflake
// generators with leased node values, segment allocators, Redis generators) and
// serves them over HTTP.
//
// One http.Handler serves:
//
//   - the IDService of proto/flurry/v1/flurry.proto through connect-go, which
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
// See docs/server.md for the routes, their exact bodies and error statuses.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/server/config"
)

// Options configures a Server.
type Options struct {
	// Config is the configuration, already checked (config.Load or Check). Nil
	// means config.Default().
	Config *config.Config
	// OpenLeaseStore opens a lease store by URL. Nil means leaseurl.Open.
	OpenLeaseStore func(ctx context.Context, url string) (lease.Store, error)
	// OpenSegmentStore opens a segment store by URL (segmenturl.Open). Nil refuses
	// segment namespaces.
	OpenSegmentStore func(ctx context.Context, url string) (segment.Store, error)
	// TextStrategies makes the sources of text strategies (uuidv7, objectid) by
	// name. Nil means the built-in ones.
	TextStrategies map[string]func(ctx context.Context) (textSource, error)
	// Logger receives the server's and the stores' messages. Nil means slog.Default().
	Logger *slog.Logger
	// Version is reported by Info.
	Version string
	// Clock is the generators' clock. Nil means clock.NewSystem().
	Clock clock.Clock
}

func (o *Options) openLease(ctx context.Context, url string) (lease.Store, error) {
	if o.OpenLeaseStore != nil {
		return o.OpenLeaseStore(ctx, url)
	}
	return leaseurl.Open(ctx, url)
}

func (o *Options) textStrategies() map[string]func(ctx context.Context) (textSource, error) {
	if o.TextStrategies != nil {
		return o.TextStrategies
	}
	return builtinText(o.Clock)
}

// Server holds the namespaces and serves them. Make one with New; Close it (or let
// Serve close it) to hand segment ranges back and release leases.
type Server struct {
	opts     Options
	cfg      *config.Config
	log      *slog.Logger
	started  time.Time
	maxCount int
	maxBody  int64
	shutdown time.Duration

	namespaces map[string]*namespace
	order      []*namespace
	segByTag   map[string]*namespace

	// Leaf's and tinyid's modes (tagset.go, leafcompat.go, tinyid.go)
	compat   compatHeaders
	leafTags *tagSet
	tiny     *tinyServer

	handler http.Handler
	metrics *metrics

	bufs   sync.Pool // *[]byte, response buffers
	idBufs sync.Pool // *[]flurry.ID

	// header values shared by every response (never modified)
	ctJSON, ctText, retryAfter1, bearer []string

	tlsConfig *tls.Config

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
		maxCount: cfg.MaxCount, maxBody: cfg.MaxBodyBytes,
		shutdown:   config.Duration(cfg.ShutdownTimeout, 30*time.Second),
		namespaces: map[string]*namespace{}, segByTag: map[string]*namespace{},
		ctJSON: []string{"application/json"}, ctText: []string{"text/plain; charset=utf-8"},
		retryAfter1: []string{"1"}, bearer: []string{`Bearer realm="flurry"`},
	}
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
	}
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	s.idBufs.New = func() any { b := make([]flurry.ID, 0, 1024); return &b }
	b := &builder{opts: &s.opts, dataDir: cfg.ResolveData(), clock: opts.Clock}
	for _, name := range cfg.Order {
		c := cfg.Namespaces[name]
		ns, err := b.build(ctx, name, c)
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			s.closeNamespaces(cctx)
			cancel()
			return nil, err
		}
		s.namespaces[name] = ns
		s.order = append(s.order, ns)
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
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.handler = s.routes()
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
	s.closeOnce.Do(func() { s.closeErr = s.closeNamespaces(ctx) })
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
	hs := &http.Server{
		Handler:           s.handler,
		Protocols:         &protos,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
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
