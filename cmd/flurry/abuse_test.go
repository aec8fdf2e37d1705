package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/verify/testenv"
)

// vmHWM reads the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestServeAbuse runs a real `flurry serve` with every strategy and drives the
// abuse cases of docs/security.md against it at once: for each namespace, 64 concurrent
// requests at its max_count (uuidv7 at 10,000,000) spread over plain GET (text
// and JSON, read in part then dropped, as a hostile client does), Connect JSON,
// gRPC, gRPC-Web and Leaf's route, plus connections that ask for 10 million IDs
// and never read. It asserts that the process's peak RSS (VmHWM) stays under the
// documented ceiling (server.MemoryCeiling plus server.MemoryPerConn per
// connection), that every request ends in bounded time, and that the server
// still serves afterwards.
func TestServeAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives 330 abusive requests at a real server, tens of seconds of both cores; run: go test -tags flurry_full -run TestServeAbuse ./cmd/flurry/")
	}
	testenv.NeedScheme(t, "redis")
	bin := buildServe(t)
	redisURL := testenv.Redis.URL(t)
	dir := t.TempDir()
	const budget = 500_000
	key := "flurry-abuse-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cfgFile := filepath.Join(dir, "flurry.yaml")
	yaml := fmt.Sprintf(`data_dir: %s
max_count: 1000000
limits: {max_ids_in_flight: %d, read_timeout: 5s, write_timeout: 10s}
namespaces:
  snow: {strategy: snowflake}
  seg: {strategy: segment, segment: {create: {step: 100000}}}
  red: {strategy: redis, max_count: 100000, redis: {url: '%s', key: %s, node: worker=7}}
  uu: {strategy: uuidv7, max_count: 10000000}
  oid: {strategy: objectid}
`, filepath.Join(dir, "data"), budget, redisURL, key)
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, http.DefaultClient, "http", nil, "--config", cfgFile)
	pid := p.cmd.Process.Pid
	before := vmHWM(t, pid)
	addr := strings.TrimPrefix(p.base, "http://")

	maxCount := map[string]int{"snow": 1_000_000, "seg": 1_000_000, "red": 100_000, "uu": 10_000_000, "oid": 1_000_000}
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	grpcHTTP := &http.Client{Transport: &http.Transport{Protocols: &h2}}
	plain := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 64}}
	clients := []flurryv1connect.IDServiceClient{
		flurryv1connect.NewIDServiceClient(plain, p.base, connect.WithProtoJSON()),
		flurryv1connect.NewIDServiceClient(grpcHTTP, p.base, connect.WithGRPC()),
		flurryv1connect.NewIDServiceClient(plain, p.base, connect.WithGRPCWeb()),
	}

	type outcome struct{ ok, busy, refused, cut atomic.Int64 }
	var out outcome
	var stuck atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	const perRequest = 3 * time.Minute // "bounded time": far above the server's own limits
	for ns, max := range maxCount {
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), perRequest)
				defer cancel()
				var err error
				began := time.Now()
				defer func() {
					if d := time.Since(began); d > 20*time.Second {
						t.Logf("%s request %d (kind %d) took %v: %v", ns, i, i%6, d.Round(time.Second), err)
					}
				}()
				switch i % 6 {
				case 0, 1: // plain GET, text or JSON: read 4 MB, then drop the connection
					format := []string{"text", "json"}[i%2]
					req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/%s/next?count=%d&format=%s", p.base, ns, max, format), nil)
					var res *http.Response
					if res, err = plain.Do(req); err == nil {
						n, rerr := io.Copy(io.Discard, io.LimitReader(res.Body, 4<<20))
						res.Body.Close()
						switch {
						case res.StatusCode == 503:
							out.busy.Add(1)
						case res.StatusCode != 200:
							t.Errorf("GET %s count %d: %d", ns, max, res.StatusCode)
						case rerr != nil || n == 0:
							err = fmt.Errorf("read %d bytes: %w", n, rerr)
						default:
							out.ok.Add(1)
						}
					}
				case 5: // Leaf's route (one ID), or a plain GET of one piece for text strategies
					u := p.base + "/api/snowflake/get/" + ns
					if ns == "seg" {
						u = p.base + "/api/segment/get/seg"
					} else if ns == "uu" || ns == "oid" {
						u = p.base + "/v1/" + ns + "/next?count=1000"
					}
					req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
					var res *http.Response
					if res, err = plain.Do(req); err == nil {
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode == 200 {
							out.ok.Add(1)
						} else if res.StatusCode == 503 {
							out.busy.Add(1)
						} else {
							t.Errorf("%s: %d", u, res.StatusCode)
						}
					}
				default: // the IDService: at max_count, or at the most one RPC may hold (a quarter of the budget)
					count := max
					if i%2 == 0 {
						count = min(max, budget/4)
					}
					var res *connect.Response[flurryv1.NextResponse]
					res, err = clients[i%6-2].Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: ns, Count: uint32(count)}))
					switch connect.CodeOf(err) {
					case connect.CodeUnavailable:
						out.busy.Add(1)
						err = nil
					case connect.CodeInvalidArgument:
						if count <= budget/4 {
							t.Errorf("rpc %s count %d: %v", ns, count, err)
						}
						out.refused.Add(1)
						err = nil
					default:
						if err == nil {
							if len(res.Msg.Ids)+len(res.Msg.TextIds) != count {
								t.Errorf("rpc %s: %d IDs, want %d", ns, len(res.Msg.Ids)+len(res.Msg.TextIds), count)
							}
							out.ok.Add(1)
						}
					}
				}
				if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
					stuck.Add(1)
				} else if err != nil {
					out.cut.Add(1)
				}
			}()
		}
	}
	// Connections that ask for 10 million IDs and do not read: the server must
	// give up on them (limits.write_timeout) rather than hold them.
	const slow = 8
	slowRead := make([]int64, slow)
	for i := 0; i < slow; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /v1/uu/next?count=10000000&format=text HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(20 * time.Second) // write_timeout is 10s
			c.SetReadDeadline(time.Now().Add(perRequest))
			n, err := io.Copy(io.Discard, bufio.NewReader(c))
			slowRead[i] = n
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				stuck.Add(1)
			}
		}()
	}
	wg.Wait()
	peak := vmHWM(t, pid)
	conns := int64(len(maxCount)*64 + slow)
	ceiling := server.MemoryCeiling(cfg) + conns*server.MemoryPerConn
	t.Logf("%v: %d served, %d refused busy (503), %d refused as above the budget (400), %d cut; RSS peak %.0f MB (at start %.0f MB), ceiling %.0f MB; slow readers got %v bytes",
		time.Since(start).Round(time.Second), out.ok.Load(), out.busy.Load(), out.refused.Load(), out.cut.Load(),
		float64(peak)/1e6, float64(before)/1e6, float64(ceiling)/1e6, slowRead)
	if peak > ceiling {
		t.Errorf("peak RSS %d bytes is above the documented ceiling %d (64 MiB + %d × 320 B + %d connections × 64 KiB)", peak, ceiling, budget, conns)
	}
	if n := stuck.Load(); n != 0 {
		t.Errorf("%d requests did not end within %v", n, perRequest)
	}
	for i, n := range slowRead {
		if n >= 370_000_000 {
			t.Errorf("slow reader %d got the whole answer (%d bytes): nothing cut it", i, n)
		}
	}
	if out.ok.Load() < int64(len(maxCount)) {
		t.Errorf("only %d requests served", out.ok.Load())
	}
	// Still serving, or serving again: on a busy machine the abuse can starve the
	// lease's renewal until its window ends, and the namespace then refuses (503,
	// no valid lease) until the next renewal, which it makes by itself.
	ended := time.Now()
	for {
		code, _, body := fetch(t, http.DefaultClient, "GET", p.base+"/v1/snow/next?count=3")
		if code == 200 {
			if d := time.Since(ended); d > time.Second {
				t.Logf("serving again %v after the abuse ended", d.Round(time.Millisecond))
			}
			break
		}
		if code != 503 || time.Since(ended) > 2*time.Minute {
			t.Fatalf("after the abuse: %d %q\n%s", code, body, p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
