package main

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// loadTimeout is the bench tests' --timeout: the default (2 s per request) is
// what a user measures with, but on a busy machine a test's requests can take
// longer, and each would count as an error.
const loadTimeout = "2m"

func TestBenchClosedLoop(t *testing.T) {
	ts := startFlurryServer(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http", nil},
		{"grpc", []string{"--grpc"}},
		{"count", []string{"--count", "100"}},
		{"chunked body", []string{"--count", "20000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bench", "--server", ts.URL, "--concurrency", "4", "--duration", "300ms", "--warmup", "50ms", "--timeout", loadTimeout}, tc.args...)
			r := cli(t, "", args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if strings.Contains(r.stdout, "IDs       0 ") {
				t.Errorf("no IDs counted:\n%s", r.stdout)
			}
			for _, w := range []string{"closed loop, 4 workers", "requests/s", "errors    0", "p50", "p99", "p999", "max"} {
				if !strings.Contains(r.stdout, w) && !strings.Contains(r.stdout, strings.TrimSuffix(w, "/s")) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}

func TestBenchOpenLoopJSON(t *testing.T) {
	ts := startFlurryServer(t)
	r := cli(t, "", "bench", "--server", ts.URL, "--rate", "500", "--duration", "400ms", "--warmup", "0s", "--concurrency", "8", "--json", "--timeout", loadTimeout)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) != 1 {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	got := res[0]
	// 400 ms at 500/s schedules exactly 200 requests; none may be added.
	if got.Mode != "open loop" || got.Errors != 0 || got.Requests == 0 || got.Requests > 200 || got.IDs != got.Requests {
		t.Errorf("result %+v, want an open loop of at most 200 requests, no errors", got)
	}
	if !(got.P50 <= got.P99 && got.P99 <= got.P999 && got.P999 <= got.Max) || got.P50 <= 0 {
		t.Errorf("percentiles out of order: %+v", got)
	}
}

func TestBenchRedisBaseline(t *testing.T) {
	testenv.NeedScheme(t, "redis")
	ts := startFlurryServer(t)
	redisURL := testenv.Redis.URL(t)
	r := cli(t, "", "bench", "--server", ts.URL, "--redis", redisURL, "--concurrency", "2", "--duration", "200ms", "--warmup", "0s", "--count", "10", "--timeout", loadTimeout)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, w := range []string{"Redis INCRBY flurry:bench:default 10", "flurry ", "redis "} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, r.stdout)
		}
	}
	if strings.Count(r.stdout, "errors    0") != 2 {
		t.Errorf("errors in:\n%s", r.stdout)
	}
}

func TestBenchErrors(t *testing.T) {
	ts := startFlurryServer(t)
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"every request fails", []string{"--server", ts.URL, "--namespace", "nope"}, 1, []string{"every request", "404"}},
		{"concurrency", []string{"--concurrency", "0"}, 2, []string{"--concurrency"}},
		{"count", []string{"--count", "0"}, 2, []string{"--count"}},
		{"duration", []string{"--duration", "0s"}, 2, []string{"--duration"}},
		{"rate", []string{"--rate", "-1"}, 2, []string{"--rate"}},
		{"redis", []string{"--redis", "http://x"}, 2, []string{"--redis"}},
		{"baseline url", []string{"--baseline", "ftp://x"}, 2, []string{"--baseline"}},
		{"baseline over grpc", []string{"--baseline", ts.URL, "--grpc"}, 2, []string{"--baseline", "--grpc"}},
		{"slice alone", []string{"--server", ts.URL, "--slice", "10ms"}, 2, []string{"--slice", "--baseline"}},
		{"slice negative", []string{"--slice", "-1s"}, 2, []string{"--slice"}},
		{"slice too long", []string{"--baseline", ts.URL, "--slice", "1s"}, 2, []string{"--slice", "--duration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bench", "--duration", "100ms", "--warmup", "0s", "--concurrency", "2"}, tc.args...)
			r := cli(t, "", args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "flurry: ") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q is not one flurry: line", r.stderr)
			}
			for _, w := range tc.wants {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
}

// TestBenchInterleaved runs a flurry server and a bare one in slices: each gets
// its exact share of the open-loop schedule, and the bare one sees its requests
// in separate stretches spread over the whole run, not in one block. The
// stretches are judged by the order in which the two servers see requests, not
// by the clock, since a busy machine can send a late slice all at once.
func TestBenchInterleaved(t *testing.T) {
	var flurryReqs atomic.Int64 // requests the flurry server has seen
	ts, _ := startFlurryServerText(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			flurryReqs.Add(1)
			h.ServeHTTP(w, r)
		})
	})
	var mu sync.Mutex
	var seen []int64 // for each request of the bare server: flurry's count by then
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, flurryReqs.Load())
		mu.Unlock()
		w.Write([]byte("1"))
	}))
	t.Cleanup(bare.Close)
	r := cli(t, "", "bench", "--server", ts.URL, "--baseline", bare.URL, "--slice", "100ms", "--rate", "1000",
		"--duration", "400ms", "--warmup", "0s", "--concurrency", "8", "--json", "--timeout", loadTimeout)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) != 2 {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	// 800 ms at 1000/s is 800 requests, alternating every 100: 400 each.
	for i, want := range []string{"GET " + ts.URL, "baseline GET " + bare.URL} {
		got := res[i]
		if !strings.HasPrefix(got.Target, want) || got.Requests != 400 || got.Errors != 0 || got.Slice != 100*time.Millisecond {
			t.Errorf("result %d: %+v; want target %q, 400 requests, no errors, slice 100ms", i, got, want)
		}
		if got.Seconds < 0.35 || got.Seconds > 0.45 {
			t.Errorf("result %d: %v seconds, want this target's 0.4", i, got.Seconds)
		}
	}
	if res[0].IDs != 400 || res[1].IDs != 0 {
		t.Errorf("IDs %d and %d, want 400 from flurry, none from the bare server", res[0].IDs, res[1].IDs)
	}
	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	if len(got) != 400 {
		t.Fatalf("the bare server saw %d requests, want 400", len(got))
	}
	// Its slices are the 2nd, 4th, 6th and 8th of the run, with 100 of flurry's
	// requests before the first and between each two: four stretches, so three
	// places where flurry saw many requests between two of the bare server's (8
	// workers blur the edges of a slice by a few requests).
	gaps := 0
	for i := 1; i < len(got); i++ {
		if got[i]-got[i-1] >= 50 {
			gaps++
		}
	}
	if first := got[0]; gaps != 3 || first < 50 || first > 150 {
		t.Errorf("the bare server's requests came with %d of flurry's before the first and %d stretches of 50 or more of flurry's between them; want about 100 before, and 3 such stretches (4 slices): %v", first, gaps, got)
	}
	text := cli(t, "", "bench", "--server", ts.URL, "--baseline", bare.URL, "--slice", "50ms",
		"--duration", "100ms", "--warmup", "0s", "--concurrency", "2", "--timeout", loadTimeout)
	if text.code != 0 || !strings.Contains(text.stdout, "flurry / baseline: p50 ") || !strings.Contains(text.stdout, "baseline GET") ||
		strings.Count(text.stdout, "interleaved with the other targets in slices of 50ms") != 2 {
		t.Errorf("exit %d, output lacks the baseline or the ratio line:\n%s%s", text.code, text.stdout, text.stderr)
	}
}

func TestSliceTarget(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		d    time.Duration
		n    int
		want int
	}{
		{0, 2, 0}, {99 * ms, 2, 0}, {100 * ms, 2, 1}, {199 * ms, 2, 1}, {200 * ms, 2, 0},
		{-1, 2, 1}, {-100 * ms, 2, 1}, {-100*ms - 1, 2, 0}, {-200 * ms, 2, 0},
		{250 * ms, 3, 2}, {-1, 3, 2}, {-150 * ms, 3, 1}, {-300 * ms, 3, 0},
	} {
		if got := sliceTarget(tc.d, 100*ms, tc.n); got != tc.want {
			t.Errorf("sliceTarget(%v, 100ms, %d) = %d, want %d", tc.d, tc.n, got, tc.want)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	var vals []time.Duration
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		v := time.Duration(r.ExpFloat64() * float64(200*time.Microsecond))
		vals = append(vals, v)
		h.record(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		exact := vals[max(0, int(q*float64(len(vals))+0.5)-1)]
		got := h.quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/64+1 {
			t.Errorf("q%v: %v, exact %v: want within 1/64 above", q, got, exact)
		}
	}
	if h.max != vals[len(vals)-1] || h.quantile(1) != h.max {
		t.Errorf("max %v, quantile(1) %v, want %v", h.max, h.quantile(1), vals[len(vals)-1])
	}
	var empty histogram
	if empty.quantile(0.99) != 0 {
		t.Error("quantile of an empty histogram")
	}
}

func FuzzHistogramBucket(f *testing.F) {
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 1e6, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint64) {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of [0,%d)", v, i, histBuckets)
		}
		hi := bucketMax(i)
		if v > hi {
			t.Fatalf("bucketMax(bucketOf(%d)) = %d, below the value", v, hi)
		}
		if hi-v > v/64 {
			t.Fatalf("bucket of %d reaches %d: wider than 1/64", v, hi)
		}
		if i > 0 && bucketMax(i-1) >= v {
			t.Fatalf("bucket %d below %d's holds it too (max %d)", i-1, v, bucketMax(i-1))
		}
		if v < ^uint64(0) && bucketOf(v+1) < i {
			t.Fatalf("buckets not monotonic at %d", v)
		}
	})
}

func TestBenchCountsEveryID(t *testing.T) {
	ts := startFlurryServer(t)
	for _, args := range [][]string{{"--count", "20000"}, {"--count", "7", "--grpc"}} {
		r := cli(t, "", append([]string{"bench", "--server", ts.URL, "--concurrency", "2", "--duration", "200ms", "--warmup", "0s", "--json", "--timeout", loadTimeout}, args...)...)
		var res []benchResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) != 1 {
			t.Fatalf("%v: %v\n%s%s", args, err, r.stdout, r.stderr)
		}
		if got := res[0]; got.Requests == 0 || got.Errors != 0 || got.IDs != got.Requests*int64(got.Count) {
			t.Errorf("%v: %d requests, %d IDs, %d errors; want Count IDs in each", args, got.Requests, got.IDs, got.Errors)
		}
	}
}
