package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
)

// serveFlags are serve's flags; each one overrides its key in --config.
type serveFlags struct {
	config   string
	data     string
	listen   string
	tlsCert  string
	tlsKey   string
	maxCount int
	check    bool
	regions  []string // --other-region: the other regions' configurations, for --check
}

func newServeCmd() *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve IDs over HTTP/JSON and gRPC",
		Long: `serve runs the flurry ID server: the IDService (gRPC, gRPC-Web and Connect
JSON on one port), plain GET routes for curl, Meituan Leaf's routes, /metrics,
/healthz and /readyz.

Without --config it serves the embedded default: a snowflake namespace "default"
whose node value is leased from a file under --data, and a segment namespace
"segment" whose tag lives in a file store (segment/filestore) under --data. With --config it serves
the namespaces of a YAML file (see docs/flurry.example.yaml); a configuration with
any problem is refused whole, every problem listed.

SIGINT or SIGTERM shut it down gracefully: it stops accepting, finishes requests in
flight, hands unused segment ranges back and releases its leases.`,
		Example: `  flurry serve
  curl 'http://127.0.0.1:8080/v1/default/next?count=3'
  flurry serve --config flurry.yaml --listen :8443 --tls-cert cert.pem --tls-key key.pem
  flurry serve --config flurry.yaml --check
  flurry serve --config eu-west.yaml --check --other-region us-east.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer tuneGC()()
			return runServe(cmd.Context(), cmd, &sf, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&sf.config, "config", "", "YAML configuration file (default: the embedded default)")
	f.StringVar(&sf.data, "data", "", "data directory of the embedded stores (file leases and segments) (default "+config.DefaultDataDir+")")
	f.StringVar(&sf.listen, "listen", "", "address to listen on (default "+config.DefaultListen+")")
	f.StringVar(&sf.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate file (with --tls-key)")
	f.StringVar(&sf.tlsKey, "tls-key", "", "the PEM key file of --tls-cert")
	f.IntVar(&sf.maxCount, "max-count", 0, fmt.Sprintf("the most IDs one request may ask for (default %d)", config.DefaultMaxCount))
	f.BoolVar(&sf.check, "check", false, "check the configuration, print the problems or \"ok\", and exit")
	f.StringSliceVar(&sf.regions, "other-region", nil, "with --check: another region's configuration file, checked with this one (distinct region values, one registry, segment residues no two regions share); repeat for each region")
	return cmd
}

// checkStandIn stands, in serve --check, for a token whose environment variable is
// not set: a well-formed token hash (so the rest of the file is checked) that no
// token has, so it could never admit a caller.
const checkStandIn = config.TokenHashPrefix + "0000000000000000000000000000000000000000000000000000000000000000"

// checkEnv looks up token_env variables for serve --check. The machine that checks
// a configuration (CI, a build host, an operator's shell) seldom holds the
// serving machine's secrets, so an unset variable is a finding to report, not a
// reason to stop checking: it is recorded in unset and stood in for.
func checkEnv(unset *[]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			return v, true
		}
		if !slices.Contains(*unset, name) {
			*unset = append(*unset, name)
		}
		return checkStandIn, true
	}
}

func runServe(ctx context.Context, cmd *cobra.Command, sf *serveFlags, stderr io.Writer) error {
	cfg := config.Default()
	env := os.LookupEnv
	var unset []string
	if sf.check {
		env = checkEnv(&unset)
	}
	if sf.config != "" {
		c, err := config.LoadEnv(sf.config, env)
		if err != nil {
			return err
		}
		cfg = c
	}
	changed := cmd.Flags().Changed
	if changed("data") {
		cfg.DataDir = sf.data
	}
	if changed("listen") {
		if err := config.CheckListen(sf.listen); err != nil {
			return usageErr("--listen: %v", err)
		}
		cfg.Listen = sf.listen
	}
	if changed("tls-cert") || changed("tls-key") {
		cfg.TLS = config.TLS{Cert: sf.tlsCert, Key: sf.tlsKey}
	}
	if changed("max-count") {
		cfg.MaxCount = sf.maxCount
	}
	if err := cfg.Check(env); err != nil {
		return err
	}
	if len(sf.regions) > 0 && !sf.check {
		return usageErr("--other-region goes with --check")
	}
	if sf.check && len(sf.regions) > 0 {
		all := []*config.Config{cfg}
		for _, f := range sf.regions {
			c, err := config.LoadEnv(f, env)
			if err != nil {
				return err
			}
			all = append(all, c)
		}
		if err := config.CheckRegions(all...); err != nil {
			return fmt.Errorf("serve --check: the regions together: %w", err)
		}
	}
	if sf.check {
		out := cmd.OutOrStdout()
		for _, n := range cfg.Notes() {
			fmt.Fprintln(out, n)
		}
		for _, name := range unset {
			fmt.Fprintf(out, "environment variable %s is not set (or empty) here: flurry serve refuses to start until it holds the token; the rest of the file is checked\n", name)
		}
		// What the configuration relies on outside it: the Redis server's
		// settings for redis namespaces.
		lines, err := server.Probe(ctx, cfg, nil)
		for _, l := range lines {
			fmt.Fprintln(out, l)
		}
		if err != nil {
			return fmt.Errorf("serve --check: %w", err)
		}
		_, err = fmt.Fprintln(out, "ok")
		return err
	}
	listen := cfg.Listen
	if listen == "" {
		listen = config.DefaultListen
	}
	clk, err := clockFromEnv(stderr, "")
	if err != nil {
		return err
	}
	// Bind before any store is opened or lease taken: an address that cannot be
	// had must not leave a node value held (and blocked for a TTL) behind it.
	// Connections that arrive while the namespaces start wait in the backlog.
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve: %w; choose another address with --listen", err)
	}
	lines := newLineHandler(stderr)
	lines.showInfo()
	log := slog.New(lines)

	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	srv, err := server.New(startCtx, server.Options{
		Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: log, Version: versionLine(), Clock: clk,
		Listening: ln.Addr(),
	})
	cancel()
	if err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return &exitError{code: 130, err: fmt.Errorf("serve: interrupted while starting: %w", err)}
		}
		return fmt.Errorf("serve: %w", err)
	}
	defer limitMemory(server.MemoryCeiling(cfg))()
	scheme := "http"
	if srv.TLS() {
		scheme = "https"
	}
	base := scheme + "://" + ln.Addr().String()
	names := srv.Namespaces()
	fmt.Fprintf(stderr, "flurry: serving namespaces %s; data in %s\n", strings.Join(names, ", "), cfg.ResolveData())
	fmt.Fprintf(stderr, "flurry: listening on %s (gRPC, gRPC-Web, Connect JSON and plain GET)\n", base)
	if len(names) > 0 {
		fmt.Fprintf(stderr, "flurry: ask for an ID: curl '%s/v1/%s/next'   (?count=1000&format=text for many)\n", base, names[0])
	}
	if cfg.Leaf != nil {
		fmt.Fprintf(stderr, "flurry: serving every tag of the Leaf table: curl '%s/api/segment/get/TAG'\n", base)
	}
	if cfg.TinyID != nil {
		prefix := cfg.TinyID.Prefix
		if prefix == "" {
			prefix = "/tinyid"
		}
		fmt.Fprintf(stderr, "flurry: serving tinyid's routes: curl '%s%s/id/nextId?bizType=TYPE&token=TOKEN'\n", base, prefix)
	}
	stopNotify := notifySystemd(ctx, stderr) // READY=1 now, STOPPING=1 on the way out
	defer stopNotify()
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(stderr, "flurry: stopped: requests finished, segment ranges handed back, leases released")
	return nil
}

// serveGCPercent is the garbage collector's target while serving, unless GOGC is
// set. The server's live heap is about 10 MB of drivers, stores and descriptors,
// and each request allocates a few hundred bytes of net/http's; at the default of
// 100 the collector scans that heap again after every 10 MB of requests, and a bare
// net/http handler with a near-empty heap served 15% more requests per second
// (wrk, one ID per request). At 400 the gap falls to 8-9% and the heap settles near
// 50 MB (RSS under load: docs/server.md).
const serveGCPercent = 400

// tuneGC sets serveGCPercent unless the environment chose with GOGC, and returns
// what puts the previous setting back (serve also runs inside tests).
func tuneGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(serveGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// limitMemory sets the runtime's soft memory limit to the server's documented
// ceiling (server.MemoryCeiling, docs/security.md) unless GOMEMLIMIT is set: with
// GOGC at 400 the heap could otherwise grow to five times what requests hold
// before a collection. It returns what puts the previous limit back.
func limitMemory(ceiling int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(ceiling)
	return func() { debug.SetMemoryLimit(old) }
}
