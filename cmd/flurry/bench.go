package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/client"
)

// benchFlags are bench's settings.
type benchFlags struct {
	clientFlags
	concurrency int
	count       uint64
	duration    time.Duration
	warmup      time.Duration
	rate        float64
	redisURL    string
	baseline    []string
	slice       time.Duration
	jsonOut     bool
}

func newBenchCmd() *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load a flurry server (and Redis INCR, for comparison) and report latency",
		Long: `bench sends requests for IDs to a flurry server and prints requests/s, IDs/s,
errors and latency percentiles (p50, p99, p999, max).

Closed loop (the default): --concurrency workers each send a request, wait for
the answer, and send the next: this measures the most the server gives.

Open loop (--rate R): requests are scheduled at R per second in total, each at an
intended send time, whatever happened to earlier ones, and spread over up to
--concurrency workers. Latency is measured from the intended send time, not from
when a worker got round to sending, so a stall counts against every request it
delayed (no coordinated omission, as in wrk2); when the workers cannot keep up,
the achieved rate falls below R and latency grows, as it would for real callers.

By default each request is the plain GET route, /v1/{namespace}/next?count=N,
over HTTP/1.1 keep-alive connections (one per worker); --grpc sends IDService.Next
over gRPC (HTTP/2, h2c for http://) instead. With several --server values the
workers are spread over them.

--redis redis://host:6379/0 then runs the same load as INCRBY (INCR when --count
is 1) of one key against Redis, for a baseline side by side. --baseline URL does
the same against any other HTTP server (the same request path; every answer with
status 200 counts), such as a bare net/http handler, to tell the server's cost
from the machine's and the load generator's.

Several targets run one after another, each for --warmup plus --duration. With
--slice D they run interleaved instead: the schedule alternates between them
every D, so that each gets --duration in all, spread over the whole run, and a
slow moment of the machine (another process, a stall of the VM) falls on all of
them alike rather than on whichever ran then. Each target keeps its own
connections; the comparison then prints each one's percentiles as a ratio to the
last target's.

The first --warmup of the run is not counted. Latencies are kept in log-linear
buckets (1.6% wide), so percentiles are exact to within 1.6%.`,
		Example: `  flurry bench --server http://127.0.0.1:8080 --concurrency 64 --count 1 --duration 10s
  flurry bench --rate 20000 --duration 30s --redis redis://127.0.0.1:6379/0
  flurry bench --grpc --count 1000 --concurrency 8
  flurry bench --rate 10000 --duration 20s --slice 1s --baseline http://127.0.0.1:8081`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			servers, err := bf.serverList()
			if err != nil {
				return err
			}
			switch {
			case bf.concurrency < 1:
				return usageErr("--concurrency must be at least 1")
			case bf.count < 1 || bf.count > 1<<31:
				return usageErr("--count must be between 1 and 2147483648")
			case bf.duration <= 0:
				return usageErr("--duration must be positive")
			case bf.warmup < 0:
				return usageErr("--warmup must not be negative")
			case bf.rate < 0 || bf.rate != bf.rate:
				return usageErr("--rate must not be negative")
			case bf.slice < 0:
				return usageErr("--slice must not be negative")
			case bf.slice > bf.duration:
				return usageErr("--slice %v is longer than --duration %v: each target needs at least one slice", bf.slice, bf.duration)
			}
			baseline, err := splitURLs(bf.baseline, "--baseline")
			if err != nil {
				return err
			}
			if len(baseline) > 0 && bf.grpc {
				return usageErr("--baseline is driven with the plain GET route, not gRPC: drop --grpc or --baseline")
			}
			var targets []benchTarget
			t, err := newFlurryTarget(servers, &bf)
			if err != nil {
				return usageErr("%v", err)
			}
			targets = append(targets, t)
			if bf.redisURL != "" {
				rt, err := newRedisTarget(bf.redisURL, &bf)
				if err != nil {
					return usageErr("--redis: %v", err)
				}
				targets = append(targets, rt)
			}
			if len(baseline) > 0 {
				bt, err := newBaselineTarget(baseline, &bf)
				if err != nil {
					return usageErr("--baseline: %v", err)
				}
				targets = append(targets, bt)
			}
			if bf.slice > 0 && len(targets) < 2 {
				return usageErr("--slice interleaves several targets: add --baseline or --redis")
			}
			defer func() {
				for _, t := range targets {
					t.close()
				}
			}()
			out := cmd.OutOrStdout()
			var results []benchResult
			if bf.slice > 0 {
				results = runBench(cmd.Context(), targets, &bf)
				if !bf.jsonOut {
					for _, r := range results {
						r.print(out)
					}
				}
			} else {
				for _, t := range targets {
					r := runBench(cmd.Context(), []benchTarget{t}, &bf)[0]
					results = append(results, r)
					if !bf.jsonOut {
						r.print(out)
					}
					if cmd.Context().Err() != nil {
						break
					}
				}
			}
			if bf.jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(results); err != nil {
					return quietPipe(err)
				}
			} else if len(results) >= 2 {
				printComparison(out, results)
			}
			for _, r := range results {
				if r.Requests == 0 && r.Errors > 0 {
					return fmt.Errorf("bench: every request to %s failed: %s", r.Target, r.FirstError)
				}
			}
			return cmd.Context().Err()
		},
	}
	bf.register(cmd, "server URL, repeated or comma-separated; workers are spread over them")
	f := cmd.Flags()
	f.IntVar(&bf.concurrency, "concurrency", 64, "workers (and connections)")
	f.Var(countValue{&bf.count}, "count", "IDs per request")
	f.DurationVar(&bf.duration, "duration", 10*time.Second, "how long to measure, after --warmup")
	f.DurationVar(&bf.warmup, "warmup", time.Second, "load sent first and not counted")
	f.Float64Var(&bf.rate, "rate", 0, "open loop at this many requests/s in total; 0 means closed loop")
	f.StringVar(&bf.redisURL, "redis", "", "also run the load as INCR against this Redis, redis://host:6379/0")
	f.StringSliceVar(&bf.baseline, "baseline", nil, "also run the load against this other HTTP server (same path), repeated or comma-separated")
	f.DurationVar(&bf.slice, "slice", 0, "interleave the targets, alternating every this long (0: one after another)")
	f.BoolVar(&bf.jsonOut, "json", false, "print the results as JSON")
	bf.count = 1
	return cmd
}

// benchTarget sends one request for count IDs.
type benchTarget interface {
	name() string
	do(ctx context.Context, worker int) (ids int, err error)
	close()
}

// httpTarget sends GET /v1/{namespace}/next?count=N&format=text over HTTP/1.1
// keep-alive connections, one per worker, written and parsed by hand (as wrk
// does): net/http's client costs more CPU per request than the server it
// measures, and on a small machine that would be what bench reports. https://
// servers go through net/http.
type httpTarget struct {
	label   string // "baseline " for --baseline, else empty
	servers []string
	paths   []string // request path and query, per server
	addrs   []string // host:port to dial, per server
	reqs    [][]byte // the whole request, per server (plain http only)
	token   string
	hc      *http.Client // for https
	conns   []*rawConn   // per worker
	timeout time.Duration
}

// rawConn is one worker's connection.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

// grpcTarget sends IDService.Next over gRPC.
type grpcTarget struct {
	servers []string
	rpcs    []flurryv1connect.IDServiceClient
	req     *flurryv1.NextRequest
	token   string
	hc      *http.Client
}

func newFlurryTarget(servers []string, bf *benchFlags) (benchTarget, error) {
	tr := &http.Transport{
		MaxIdleConns:        bf.concurrency * len(servers),
		MaxIdleConnsPerHost: bf.concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	hc := &http.Client{Transport: tr, Timeout: bf.timeout}
	if bf.grpc {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
		tr.ForceAttemptHTTP2 = true
		t := &grpcTarget{servers: servers, token: bf.token, hc: hc,
			req: &flurryv1.NextRequest{Namespace: bf.namespace, Count: uint32(bf.count)}}
		for _, s := range servers {
			t.rpcs = append(t.rpcs, flurryv1connect.NewIDServiceClient(hc, s, connect.WithGRPC(), connect.WithAcceptCompression("gzip", nil, nil)))
		}
		return t, nil
	}
	t := &httpTarget{servers: servers, token: bf.token, hc: hc, conns: make([]*rawConn, bf.concurrency), timeout: bf.timeout}
	for _, s := range servers {
		u, err := url.Parse(s)
		if err != nil {
			return nil, err
		}
		path := u.Path + "/v1/" + url.PathEscape(bf.namespace) + "/next?count=" + strconv.FormatUint(bf.count, 10) + "&format=text"
		t.paths = append(t.paths, path)
		addr := u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), map[bool]string{true: "443", false: "80"}[u.Scheme == "https"])
		}
		t.addrs = append(t.addrs, addr)
		req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: flurry-bench\r\n"
		if t.token != "" {
			req += "Authorization: Bearer " + t.token + "\r\n"
		}
		t.reqs = append(t.reqs, []byte(req+"\r\n"))
	}
	return t, nil
}

func (t *httpTarget) name() string {
	var urls []string
	for i, s := range t.servers {
		urls = append(urls, s+t.paths[i])
	}
	return t.label + "GET " + strings.Join(urls, " ") + " (HTTP/1.1 keep-alive)"
}

// newBaselineTarget drives the --baseline servers with the flurry target's
// request over plain HTTP/1.1.
func newBaselineTarget(servers []string, bf *benchFlags) (benchTarget, error) {
	plain := *bf
	plain.grpc = false
	t, err := newFlurryTarget(servers, &plain)
	if err != nil {
		return nil, err
	}
	t.(*httpTarget).label = "baseline "
	return t, nil
}

// splitURLs parses the URLs of a repeated, comma-separated flag.
func splitURLs(vals []string, flag string) ([]string, error) {
	var out []string
	for _, v := range vals {
		l, err := client.ParseServers(v)
		if err != nil {
			return nil, usageErr("%s: %v", flag, err)
		}
		out = append(out, l...)
	}
	return out, nil
}

func (t *httpTarget) do(ctx context.Context, worker int) (int, error) {
	si := worker % len(t.servers)
	if strings.HasPrefix(t.servers[si], "https://") {
		return t.doStd(ctx, si)
	}
	rc := t.conns[worker]
	if rc == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", t.addrs[si])
		if err != nil {
			return 0, err
		}
		rc = &rawConn{c: c, br: bufio.NewReaderSize(c, 64<<10)}
		t.conns[worker] = rc
	}
	rc.c.SetDeadline(time.Now().Add(t.timeout))
	n, keep, err := rc.roundTrip(t.reqs[si])
	if err != nil || !keep {
		rc.c.Close()
		t.conns[worker] = nil
	}
	return n, err
}

// roundTrip writes req and reads one response, counting the lines of its body.
// keep reports whether the connection can carry the next request.
func (rc *rawConn) roundTrip(req []byte) (lines int, keep bool, err error) {
	if _, err := rc.c.Write(req); err != nil {
		return 0, false, err
	}
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("not an HTTP response: %q", bytes.TrimSpace(line))
	}
	status, _ := strconv.Atoi(string(line[9:12]))
	length, chunked := int64(-1), false
	keep = line[7] == '1'
	for {
		h, err := rc.br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, _ := bytes.Cut(h, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, err = strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return 0, false, fmt.Errorf("bad Content-Length %q", v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			if bytes.EqualFold(v, []byte("close")) {
				keep = false
			}
		}
	}
	var body []byte // kept only for an error's message
	count := func(p []byte) {
		lines += bytes.Count(p, []byte{'\n'})
		if status != http.StatusOK && len(body) < 200 {
			body = append(body, p[:min(len(p), 200-len(body))]...)
		}
	}
	switch {
	case chunked:
		for {
			l, err := rc.br.ReadSlice('\n')
			if err != nil {
				return 0, false, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(l, []byte(";"), 2)[0])), 16, 64)
			if err != nil || size < 0 {
				return 0, false, fmt.Errorf("bad chunk size %q", bytes.TrimSpace(l))
			}
			if err := rc.body(size, count); err != nil {
				return 0, false, err
			}
			if _, err := rc.br.Discard(2); err != nil { // the chunk's CRLF
				return 0, false, err
			}
			if size == 0 {
				break
			}
		}
	case length >= 0:
		if err := rc.body(length, count); err != nil {
			return 0, false, err
		}
	default:
		return 0, false, errors.New("response without Content-Length or chunked encoding")
	}
	if status != http.StatusOK {
		return 0, keep, fmt.Errorf("HTTP %d: %s", status, bytes.TrimSpace(body))
	}
	return lines, keep, nil
}

// body passes the next n bytes to f, in pieces.
func (rc *rawConn) body(n int64, f func([]byte)) error {
	for n > 0 {
		p, err := rc.br.Peek(int(min(n, int64(rc.br.Size()))))
		if len(p) == 0 && err != nil {
			return err
		}
		if len(p) == 0 {
			p, _ = rc.br.Peek(rc.br.Buffered())
		}
		f(p)
		rc.br.Discard(len(p))
		n -= int64(len(p))
	}
	return nil
}

// doStd sends the request through net/http (https servers).
func (t *httpTarget) doStd(ctx context.Context, si int) (int, error) {
	u, _ := url.Parse(t.servers[si])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Scheme+"://"+u.Host+t.paths[si], nil)
	if err != nil {
		return 0, err
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
	return bytes.Count(b, []byte{'\n'}), nil
}

func (t *httpTarget) close() {
	for _, rc := range t.conns {
		if rc != nil {
			rc.c.Close()
		}
	}
	t.hc.CloseIdleConnections()
}

func (t *grpcTarget) name() string {
	return "gRPC IDService.Next " + strings.Join(t.servers, " ")
}

func (t *grpcTarget) do(ctx context.Context, worker int) (int, error) {
	req := connect.NewRequest(t.req)
	if t.token != "" {
		req.Header().Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.rpcs[worker%len(t.rpcs)].Next(ctx, req)
	if err != nil {
		return 0, err
	}
	return len(resp.Msg.Ids) + len(resp.Msg.TextIds), nil
}

func (t *grpcTarget) close() { t.hc.CloseIdleConnections() }

// benchResult is one target's run.
type benchResult struct {
	Target      string  `json:"target"`
	Mode        string  `json:"mode"` // "closed loop" or "open loop"
	Concurrency int     `json:"concurrency"`
	Count       uint64  `json:"count"`
	Rate        float64 `json:"rate,omitempty"` // asked for, open loop
	Seconds     float64 `json:"seconds"`
	Requests    int64   `json:"requests"`
	IDs         int64   `json:"ids"`
	Errors      int64   `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	RequestsPS  float64 `json:"requests_per_second"`
	IDsPS       float64 `json:"ids_per_second"`
	// Latencies, in nanoseconds in JSON.
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
	// ServiceP99 is the p99 of the time from actual send to answer, open loop only:
	// the gap to P99 is time requests waited for a free worker or a late timer.
	ServiceP99 time.Duration `json:"service_p99_ns,omitempty"`
	// Slice is --slice when the targets ran interleaved; Seconds is then this
	// target's share of the measured time.
	Slice time.Duration `json:"slice_ns,omitempty"`
}

// runBench runs bf's load against targets for --warmup plus --duration each, or
// until ctx ends, and returns one result per target. With one target, or
// --slice 0, targets must be one. With --slice D the schedule is cut into slices
// of D, given to the targets in turn: slice k of the run goes to target k mod
// len(targets), warmup included, so each target gets the same share of every
// stretch of the run.
func runBench(ctx context.Context, targets []benchTarget, bf *benchFlags) []benchResult {
	workers := bf.concurrency
	nt := len(targets)
	hists := make([][]histogram, nt) // per target, per worker
	svc := make([][]histogram, nt)
	ids := make([]atomic.Int64, nt)
	errs := make([]atomic.Int64, nt)
	firstErr := make([]atomic.Pointer[string], nt)
	for i := range targets {
		hists[i] = make([]histogram, workers)
		svc[i] = make([]histogram, workers)
	}
	slice := bf.slice
	span := bf.duration // measured time per target
	if nt > 1 {
		// Whole slices only, so every target is measured for the same time.
		slices := max(1, int64((bf.duration+slice/2)/slice))
		span = time.Duration(slices) * slice
	}
	start := time.Now()
	measureFrom := start.Add(bf.warmup)
	end := measureFrom.Add(span * time.Duration(nt))
	which := func(t time.Time) int {
		if nt == 1 {
			return 0
		}
		return sliceTarget(t.Sub(measureFrom), slice, nt)
	}
	var period time.Duration
	if bf.rate > 0 {
		period = time.Duration(float64(time.Second) / bf.rate)
		if period <= 0 {
			period = 1
		}
	}
	var next atomic.Int64 // open loop: the next request's number
	rctx, cancel := context.WithDeadline(ctx, end.Add(bf.timeout))
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for rctx.Err() == nil {
				var intended time.Time
				if period > 0 {
					k := next.Add(1) - 1
					intended = start.Add(time.Duration(k) * period)
					if !intended.Before(end) {
						return
					}
					if d := time.Until(intended); d > 0 {
						timer.Reset(d)
						select {
						case <-timer.C:
						case <-rctx.Done():
							return
						}
					}
				}
				sent := time.Now()
				if period == 0 {
					if !sent.Before(end) {
						return
					}
					intended = sent
				}
				ti := which(intended)
				n, err := targets[ti].do(rctx, w)
				done := time.Now()
				if intended.Before(measureFrom) {
					continue
				}
				if err != nil {
					if rctx.Err() != nil {
						return
					}
					if errs[ti].Add(1) == 1 {
						s := oneLine(err)
						firstErr[ti].Store(&s)
					}
					continue
				}
				ids[ti].Add(int64(n))
				hists[ti][w].record(done.Sub(intended))
				svc[ti][w].record(done.Sub(sent))
			}
		})
	}
	wg.Wait()
	elapsed := min(time.Since(measureFrom), span*time.Duration(nt)) / time.Duration(nt)
	if elapsed <= 0 {
		elapsed = time.Nanosecond
	}
	out := make([]benchResult, nt)
	for ti, t := range targets {
		var all, allSvc histogram
		for i := range hists[ti] {
			all.merge(&hists[ti][i])
			allSvc.merge(&svc[ti][i])
		}
		r := benchResult{
			Target:      t.name(),
			Mode:        "closed loop",
			Concurrency: workers,
			Count:       bf.count,
			Seconds:     elapsed.Seconds(),
			Requests:    int64(all.n),
			IDs:         ids[ti].Load(),
			Errors:      errs[ti].Load(),
			P50:         all.quantile(0.50),
			P99:         all.quantile(0.99),
			P999:        all.quantile(0.999),
			Max:         all.max,
		}
		if nt > 1 {
			r.Slice = slice
		}
		if period > 0 {
			r.Mode, r.Rate = "open loop", bf.rate
			r.ServiceP99 = allSvc.quantile(0.99)
		}
		if p := firstErr[ti].Load(); p != nil {
			r.FirstError = *p
		}
		r.RequestsPS = float64(r.Requests) / r.Seconds
		r.IDsPS = float64(r.IDs) / r.Seconds
		out[ti] = r
	}
	return out
}

// sliceTarget returns which of n interleaved targets a request meant for d after
// the measured part's start goes to: slice k (floor(d / slice)) goes to target k
// mod n, counting back through the warmup too, so that the measured part starts
// with the first target.
func sliceTarget(d, slice time.Duration, n int) int {
	k := int64(d / slice)
	if d < 0 && d%slice != 0 {
		k-- // floor, not truncation toward zero
	}
	return int(((k % int64(n)) + int64(n)) % int64(n))
}

func (r benchResult) print(w io.Writer) {
	fmt.Fprintf(w, "target    %s\n", r.Target)
	if r.Rate > 0 {
		fmt.Fprintf(w, "load      open loop at %s requests/s, up to %d workers, %d IDs per request, %.1fs (latency from the intended send time)\n",
			strconv.FormatFloat(r.Rate, 'f', -1, 64), r.Concurrency, r.Count, r.Seconds)
	} else {
		fmt.Fprintf(w, "load      closed loop, %d workers, %d IDs per request, %.1fs\n", r.Concurrency, r.Count, r.Seconds)
	}
	if r.Slice > 0 {
		fmt.Fprintf(w, "          interleaved with the other targets in slices of %v; %.1fs is this target's share\n", r.Slice, r.Seconds)
	}
	fmt.Fprintf(w, "requests  %s (%s/s)\n", group(uint64(r.Requests)), group(uint64(r.RequestsPS+0.5)))
	fmt.Fprintf(w, "IDs       %s (%s/s)\n", group(uint64(r.IDs)), group(uint64(r.IDsPS+0.5)))
	fmt.Fprintf(w, "errors    %d", r.Errors)
	if r.FirstError != "" {
		fmt.Fprintf(w, " (first: %s)", r.FirstError)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "latency   p50 %v  p99 %v  p999 %v  max %v\n", round(r.P50), round(r.P99), round(r.P999), round(r.Max))
	if r.Rate > 0 {
		fmt.Fprintf(w, "service   p99 %v (from the actual send; the rest of p99 is waiting for a worker or a late timer)\n", round(r.ServiceP99))
	}
	fmt.Fprintln(w)
}

// printComparison prints the results side by side and, for each one but the
// last, its percentiles as a ratio to the last one's: the baseline when
// --baseline is given, else Redis.
func printComparison(w io.Writer, rs []benchResult) {
	label := func(r benchResult) string {
		switch {
		case strings.HasPrefix(r.Target, "baseline "):
			return "baseline"
		case strings.HasPrefix(r.Target, "Redis "):
			return "redis"
		}
		return "flurry"
	}
	fmt.Fprintf(w, "%-10s %14s %14s %10s %10s %10s %10s\n", "", "requests/s", "IDs/s", "p50", "p99", "p999", "max")
	for _, r := range rs {
		fmt.Fprintf(w, "%-10s %14s %14s %10v %10v %10v %10v\n", label(r), group(uint64(r.RequestsPS+0.5)), group(uint64(r.IDsPS+0.5)),
			round(r.P50), round(r.P99), round(r.P999), round(r.Max))
	}
	base := rs[len(rs)-1]
	ratio := func(a, b time.Duration) string {
		if b <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
	}
	for _, r := range rs[:len(rs)-1] {
		fmt.Fprintf(w, "%s / %s: p50 %s  p99 %s  p999 %s  max %s\n", label(r), label(base),
			ratio(r.P50, base.P50), ratio(r.P99, base.P99), ratio(r.P999, base.P999), ratio(r.Max, base.Max))
	}
}

// round keeps three significant digits of a latency for printing.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}

// histogram counts latencies in log-linear buckets, as HdrHistogram does: values
// below 128 ns each have a bucket, and every power of two above is split into 64
// buckets, so a bucket is at most 1/64 (1.6%) of its values wide. It needs no
// locking: each worker has its own, merged at the end.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    time.Duration
}

const (
	histSub     = 7 // 2^7 = 128 exact buckets, then 64 per power of two
	histBuckets = (64-histSub+1)*(1<<(histSub-1)) + (1 << (histSub - 1))
)

// bucketOf returns the bucket of v nanoseconds.
func bucketOf(v uint64) int {
	if v < 1<<histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSub // >= 1
	return shift<<(histSub-1) + int(v>>shift)
}

// bucketMax returns the largest value in bucket i.
func bucketMax(i int) uint64 {
	if i < 1<<histSub {
		return uint64(i)
	}
	shift := i>>(histSub-1) - 1
	m := uint64(i - shift<<(histSub-1))
	return (m+1)<<shift - 1
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	h.max = max(h.max, d)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the smallest bucket bound at or below which a fraction q of
// the values lie (HdrHistogram's "highest equivalent value"), never above max.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketMax(i)), h.max)
		}
	}
	return h.max
}
