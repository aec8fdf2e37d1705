// Command fhclient is the fault harness's workload: it asks flurry nodes for batches
// of IDs (GET /v1/{ns}/next?count=N&format=text) from several workers per namespace,
// with a bounded timeout per request, and writes every request it made to a file, one
// line per op (package oplog). A worker stays on its
// node while it answers and moves to the next node after an error, as a client with
// several endpoints does; it also moves on every -rotate requests so that every node
// keeps serving.
//
// It stops after -duration or -max-requests, or on SIGTERM/SIGINT, and flushes.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/flurryid/flurry/internal/checker"
	"github.com/flurryid/flurry/internal/harness/oplog"
)

func main() {
	var (
		nodes    = flag.String("nodes", "", "name=baseURL,name=baseURL,... of the flurry nodes")
		nss      = flag.String("ns", "", "namespaces, comma-separated")
		workers  = flag.Int("workers", 2, "workers per namespace")
		count    = flag.Int("count", 1000, "IDs per request")
		timeout  = flag.Duration("timeout", 2*time.Second, "bound on one request")
		duration = flag.Duration("duration", time.Minute, "stop after this long")
		maxReq   = flag.Int64("max-requests", 1_000_000, "stop after this many requests in all")
		rotate   = flag.Int("rotate", 50, "move to the next node after this many requests")
		out      = flag.String("out", "", "op file (required)")
		name     = flag.String("name", "c", "this client's name, in every op")
		rate     = flag.Float64("rate", 0, "requests per second of all workers together (0: as fast as answered)")
		seed     = flag.Uint64("seed", 1, "seed of the workers' first nodes and rotation lengths")
	)
	flag.Parse()
	if *nodes == "" || *nss == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "fhclient: -nodes, -ns and -out are required")
		os.Exit(2)
	}
	var names, urls []string
	for _, kv := range strings.Split(*nodes, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "fhclient: -nodes: %q is not name=URL\n", kv)
			os.Exit(2)
		}
		names, urls = append(names, k), append(urls, v)
	}
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
	var left atomic.Int64
	left.Store(*maxReq)
	var pace *pacer
	if *rate > 0 {
		pace = &pacer{every: time.Duration(float64(time.Second) / *rate), next: time.Now()}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	var wg sync.WaitGroup
	// Workers start on nodes and rotate after lengths drawn from the seed, so that
	// they do not all sit on one node when it stops answering.
	r := rand.New(rand.NewPCG(*seed, 0))
	for _, ns := range strings.Split(*nss, ",") {
		for i := 0; i < *workers; i++ {
			wg.Add(1)
			start, rot := r.IntN(len(urls)), *rotate/2+r.IntN(*rotate+1)
			if i > 0 {
				start = (start + i) % len(urls)
			}
			go func() {
				defer wg.Done()
				work(ctx, hc, w, &left, pace, *name, ns, names, urls, start, *count, max(rot, 1), *timeout)
			}()
		}
	}
	wg.Wait()
	w.mu.Lock()
	err = w.b.Flush()
	w.mu.Unlock()
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fhclient:", err)
		os.Exit(1)
	}
}

type writer struct {
	mu sync.Mutex
	b  *bufio.Writer
}

// pacer hands out request slots every so often to all workers together.
type pacer struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
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
		w.mu.Lock()
		_, _ = w.b.Write(line)
		w.mu.Unlock()
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
		return ids, netClass(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return ids, "read: " + netClass(err)
	}
	if resp.StatusCode != http.StatusOK {
		return ids, httpClass(resp.StatusCode, body)
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

// netClass names a transport error by its kind, without addresses, so that the
// report counts failures by class.
func netClass(err error) string {
	s := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(s, "Client.Timeout") || strings.Contains(s, "i/o timeout"):
		return "timeout"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "EOF"):
		return "connection closed (EOF)"
	case strings.Contains(s, "no route"):
		return "no route"
	}
	return s
}

// httpClass is the status and flurry's reason without its details: the JSON error
// up to its first ": ", parenthesised advice removed (e.g. "503 namespace sfe holds no
// valid lease on a node value").
func httpClass(status int, body []byte) string {
	msg := strings.TrimSpace(string(body))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	msg = strings.TrimPrefix(msg, "error: ")
	if i := strings.Index(msg, ": "); i > 0 {
		msg = msg[:i]
	}
	for {
		i := strings.Index(msg, " (")
		j := strings.Index(msg, ")")
		if i < 0 || j < i {
			break
		}
		msg = msg[:i] + msg[j+1:]
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return strconv.Itoa(status) + " " + strings.TrimSpace(msg)
}
