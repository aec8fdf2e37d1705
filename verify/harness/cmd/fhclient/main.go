// Command fhclient is the fault harness's workload. It has two modes, and writes
// every request (or run of calls) it made to a file, one line per op (package
// oplog), until -duration or -max-requests, or SIGTERM/SIGINT, and flushes.
//
// -mode http (the default) asks flurry nodes for batches of IDs (GET
// /v1/{ns}/next?count=N&format=text) from several workers per namespace, with a
// bounded timeout per request. A worker stays on its node while it answers and moves
// to the next node after an error, as a client with several endpoints does; it also
// moves on every -rotate requests so that every node keeps serving. It measures the
// nodes: every request is an op.
//
// -mode client asks for IDs the way an application does, through flurry's Go client
// (package client: a buffer per namespace, refilled in batches, failover between
// the nodes), one ID per Next call, from -workers callers per namespace on each of
// -clients Clients. It measures what callers see: every call that fails is an op,
// and a run of calls answered from one node is one op (see goclient.go).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// config is the command line.
type config struct {
	mode        string
	names, urls []string // the nodes
	nss         []string
	workers     int
	clients     int
	local       int
	count       int
	timeout     time.Duration
	maxReq      int64
	rotate      int
	name        string
	rate        float64
	seed        uint64
}

func main() {
	var (
		cfg      config
		nodes    = flag.String("nodes", "", "name=baseURL,name=baseURL,... of the flurry nodes")
		nss      = flag.String("ns", "", "namespaces, comma-separated")
		duration = flag.Duration("duration", time.Minute, "stop after this long")
		out      = flag.String("out", "", "op file (required)")
	)
	flag.StringVar(&cfg.mode, "mode", "http", "http: raw HTTP requests to the nodes; client: Next calls through flurry's Go client")
	flag.IntVar(&cfg.workers, "workers", 2, "workers (callers with -mode client) per namespace")
	flag.IntVar(&cfg.clients, "clients", 2, "-mode client: Go clients, each with every node and its own buffers")
	flag.IntVar(&cfg.local, "local", 0, "-mode client: the first N of -nodes are this host's region's, the Client's Servers, and the rest its one remote region (client.Options.Remote); 0: all of them, in one rotation")
	flag.IntVar(&cfg.count, "count", 1000, "-mode http: IDs per request")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Second, "bound on one request (-mode client: on one Next call)")
	flag.Int64Var(&cfg.maxReq, "max-requests", 1_000_000, "stop after this many requests (Next calls) in all")
	flag.IntVar(&cfg.rotate, "rotate", 50, "-mode http: move to the next node after this many requests")
	flag.StringVar(&cfg.name, "name", "c", "this client's name, in every op")
	flag.Float64Var(&cfg.rate, "rate", 0, "requests (Next calls) per second of all workers together (0: as fast as answered)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the workers' first nodes and rotation lengths")
	flag.Parse()
	if *nodes == "" || *nss == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "fhclient: -nodes, -ns and -out are required")
		os.Exit(2)
	}
	if cfg.mode != "http" && cfg.mode != "client" {
		fmt.Fprintf(os.Stderr, "fhclient: -mode %q: use http or client\n", cfg.mode)
		os.Exit(2)
	}
	for _, kv := range strings.Split(*nodes, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "fhclient: -nodes: %q is not name=URL\n", kv)
			os.Exit(2)
		}
		cfg.names, cfg.urls = append(cfg.names, k), append(cfg.urls, v)
	}
	cfg.nss = strings.Split(*nss, ",")
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fhclient:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()

	w := &writer{b: bufio.NewWriterSize(f, 1<<20)}
	if cfg.mode == "client" {
		err = runClient(ctx, cfg, w)
	} else {
		runHTTP(ctx, cfg, w)
	}
	w.mu.Lock()
	if ferr := w.b.Flush(); err == nil {
		err = ferr
	}
	w.mu.Unlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fhclient:", err)
		os.Exit(1)
	}
}

// runHTTP is -mode http.
func runHTTP(ctx context.Context, cfg config, w *writer) {
	var left atomic.Int64
	left.Store(cfg.maxReq)
	var pace *pacer
	if cfg.rate > 0 {
		pace = newPacer(cfg.rate)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	var wg sync.WaitGroup
	// Workers start on nodes and rotate after lengths drawn from the seed, so that
	// they do not all sit on one node when it stops answering.
	r := rand.New(rand.NewPCG(cfg.seed, 0))
	for _, ns := range cfg.nss {
		for i := 0; i < cfg.workers; i++ {
			wg.Add(1)
			start, rot := r.IntN(len(cfg.urls)), cfg.rotate/2+r.IntN(cfg.rotate+1)
			if i > 0 {
				start = (start + i) % len(cfg.urls)
			}
			go func() {
				defer wg.Done()
				work(ctx, hc, w, &left, pace, cfg.name, ns, cfg.names, cfg.urls, start, cfg.count, max(rot, 1), cfg.timeout)
			}()
		}
	}
	wg.Wait()
}

// writer is the op file, shared by the workers.
type writer struct {
	mu sync.Mutex
	b  *bufio.Writer
}

// write appends op's line.
func (w *writer) write(line []byte) {
	w.mu.Lock()
	_, _ = w.b.Write(line)
	w.mu.Unlock()
}

// pacer hands out request slots every so often to all workers together.
type pacer struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
}

func newPacer(rate float64) *pacer {
	return &pacer{every: time.Duration(float64(time.Second) / rate), next: time.Now()}
}

// wait sleeps until this worker's slot; false when ctx ended first.
func (p *pacer) wait(ctx context.Context) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now.Add(-time.Second)) {
		p.next = now // a stall is not made up for with a burst
	}
	at := p.next
	p.next = p.next.Add(p.every)
	p.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func work(ctx context.Context, hc *http.Client, w *writer, left *atomic.Int64, pace *pacer, client, ns string, names, urls []string, node, count, rotate int, timeout time.Duration) {
	var ids []int64
	line := make([]byte, 0, 256)
	n := 0
	for ctx.Err() == nil && left.Add(-1) >= 0 {
		if !pace.wait(ctx) {
			return
		}
		start := time.Now()
		var errText string
		ids, errText = get(ctx, hc, urls[node]+"/v1/"+ns+"/next?count="+strconv.Itoa(count)+"&format=text", timeout, ids[:0])
		end := time.Now()
		if ctx.Err() != nil && errText != "" {
			return // cut short by the end of the run: not an op of the system's
		}
		line = oplog.Append(line[:0], checker.Op{Client: client, Node: names[node], Namespace: ns, Start: start, End: end, IDs: ids, Err: errText})
		w.write(line)
		n++
		if errText != "" || n%rotate == 0 {
			node = (node + 1) % len(urls)
		}
		if errText != "" {
			// Bounded backoff so a refusing cluster is not a busy loop.
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// get asks for IDs; on success the error text is "".
func get(ctx context.Context, hc *http.Client, url string, timeout time.Duration, ids []int64) ([]int64, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ids, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return ids, oplog.NetClass(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return ids, "read: " + oplog.NetClass(err)
	}
	if resp.StatusCode != http.StatusOK {
		return ids, oplog.HTTPClass(resp.StatusCode, body)
	}
	for len(body) > 0 {
		i := 0
		var v int64
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			v = v*10 + int64(body[i]-'0')
			i++
		}
		if i == 0 || (i < len(body) && body[i] != '\n') {
			return ids[:0], "bad body: " + strconv.Quote(string(body[:min(len(body), 80)]))
		}
		ids = append(ids, v)
		if i < len(body) {
			i++
		}
		body = body[i:]
	}
	return ids, ""
}
