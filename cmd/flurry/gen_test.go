package main

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
)

// Gen tests give each generator its own node value: the snowflake package refuses two
// live generators of one node value in one process.

// parseIDs checks that out holds want IDs, one per line, strictly increasing.
func parseIDs(t *testing.T, out string, want int) []flurry.ID {
	t.Helper()
	ls := lines(out)
	if len(ls) != want {
		t.Fatalf("%d lines, want %d", len(ls), want)
	}
	ids := make([]flurry.ID, len(ls))
	for i, s := range ls {
		id, err := flurry.ParseID(s)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("line %d: %d is not above %d", i+1, id, ids[i-1])
		}
		ids[i] = id
	}
	return ids
}

func TestGen(t *testing.T) {
	r := cli(t, "", "gen", "-n", "100000", "--layout", "twitter", "--node", "worker=3,datacenter=1")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("gen: code %d, stderr %q", r.code, r.stderr)
	}
	ids := parseIDs(t, r.stdout, 100000) // strictly increasing, so distinct
	l, _ := layout.Parse("twitter")
	for _, id := range ids {
		p, err := l.Decompose(id)
		if err != nil || p.Nodes != (layout.NodeValues{1, 3}) {
			t.Fatalf("ID %d decodes to %+v, %v; want datacenter 1, worker 3", id, p, err)
		}
	}
	// Through decode too.
	r = cli(t, r.stdout[:strings.Index(r.stdout, "\n")+1], "decode", "--layout", "twitter")
	if r.code != 0 || !strings.Contains(r.stdout, `"datacenter":1,"worker":3,"seq":`) {
		t.Errorf("decode of a generated ID: %+v", r)
	}
}

func TestGenCountsAndOptions(t *testing.T) {
	for i, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-n", "1e3"}, 1000},
		{[]string{"-n", "1_000", "--start", "random", "--random-below", "10"}, 1000},
		{[]string{"-n", "5000", "--start", "continue"}, 5000},
		{[]string{"-n", "10000", "--overflow", "borrow", "--max-drift", "20ms"}, 10000},
		{[]string{"--count", "0"}, 0},
		{nil, 1},
		{[]string{"-n", "300", "--layout", "time:41:1ms:2020-01-01T00:00:00Z,worker:10,seq:2"}, 300}, // 4 IDs per ms: waits
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"gen", "--node", "worker=" + strconv.Itoa(20+i)}, tc.args...)
			r := cli(t, "", args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit code %d, stderr %q", r.code, r.stderr)
			}
			parseIDs(t, r.stdout, tc.want)
		})
	}
}

func TestGenNodeErrors(t *testing.T) {
	wantOneLineError(t, cli(t, "", "gen", "--layout", "twitter", "--node", "worker=40"), 2, "worker 40 does not fit in 5 bits (0..31)")
	wantOneLineError(t, cli(t, "", "gen", "--node", "shard=1"), 2, `no node field "shard"; its node fields are datacenter, worker`)
	wantOneLineError(t, cli(t, "", "gen", "--node", "worker"), 2, "give them as name=value")
	wantOneLineError(t, cli(t, "", "gen", "--layout", "bogus"), 2, `unknown preset "bogus"`)
	wantOneLineError(t, cli(t, "", "gen", "--layout", "baidu", "--node", "worker=1"), 1, "exhausted")
}

func TestGenWarnsWithoutNode(t *testing.T) {
	r := cli(t, "", "gen", "-n", "3")
	if r.code != 0 {
		t.Fatalf("gen: %+v", r)
	}
	parseIDs(t, r.stdout, 3)
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "node value 0 is used (datacenter=0,worker=0)") ||
		!strings.Contains(r.stderr, "duplicate IDs") || !strings.Contains(r.stderr, "--node datacenter=1,worker=2") {
		t.Errorf("warning %q", r.stderr)
	}
	r = cli(t, "", "gen", "-n", "3", "--layout", "mastodon")
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "no node field") {
		t.Errorf("mastodon warning: %+v", r)
	}
}

func TestGenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := cliContext(t, ctx, "", "gen", "-n", "1e9", "--node", "worker=9")
	if r.code != 130 || r.stdout != "" || r.stderr != "flurry: gen: 1,000,000,000 IDs at the layout's cap of 4,096,000 IDs/s take about 4m5s\n"+
		"flurry: gen: interrupted after 0 of 1000000000 IDs\n" {
		t.Errorf("cancelled gen: %+v", r)
	}
}

// failWriter accepts limit bytes, then fails with err.
type failWriter struct {
	n, limit int
	err      error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, w.err
	}
	w.n += len(p)
	return len(p), nil
}

func TestGenWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code       int
		wantStderr string
	}{
		{syscall.EPIPE, 0, ""}, // the reader has gone, as with | head
		{syscall.ENOSPC, 1, "flurry: gen: write: no space left on device\n"},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			out := &failWriter{limit: 100 << 10, err: tc.err}
			var errb bytes.Buffer
			code := run(context.Background(), []string{"gen", "-n", "1e6", "--node", "worker=11"}, nil, out, &errb)
			if code != tc.code || errb.String() != tc.wantStderr {
				t.Errorf("exit code %d, stderr %q; want %d, %q", code, errb.String(), tc.code, tc.wantStderr)
			}
		})
	}
}

func TestGenProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 20_000_000, true)
	p.capRate = 1000 // 15,000,000 left at 1,000/s: at least 15,000s
	p.update(1)      // less than a second in: nothing
	if b.Len() != 0 {
		t.Fatalf("progress too early: %q", b.String())
	}
	p.next = time.Now()
	p.update(5_000_000)
	p.finish()
	if s := b.String(); !strings.Contains(s, ", 4h10m0s left") {
		t.Errorf("progress %q: want the time left at the layout's cap (4h10m0s)", s)
	}
	if s := b.String(); !strings.HasPrefix(s, "\rflurry: gen: 5,000,000 of 20,000,000 IDs (25%), ") || !strings.Contains(s, " IDs/s, ") || !strings.HasSuffix(s, " left\x1b[K\n") {
		t.Errorf("progress %q", s)
	}
	b.Reset()
	off := newProgress(&b, 20_000_000, false)
	off.next = time.Now()
	off.update(5)
	off.finish()
	if b.Len() != 0 {
		t.Errorf("progress when off: %q", b.String())
	}
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}

func TestGenClosesGenerator(t *testing.T) {
	// Two runs in a row with one node value: the first must release it.
	for range 2 {
		if r := cli(t, "", "gen", "-n", "10", "--node", "worker=12"); r.code != 0 {
			t.Fatalf("gen: %+v", r)
		}
	}
	l, _ := layout.Parse("twitter")
	g, err := snowflake.New(snowflake.Options{Layout: l, Node: layout.NodeValues{0, 12}})
	if err != nil {
		t.Fatalf("node value still in use after gen: %v", err)
	}
	defer g.Close()
	r := cli(t, "", "gen", "--node", "worker=12")
	if r.code != 1 || !strings.Contains(r.stderr, "already in use") {
		t.Errorf("gen beside a live generator of the same node: %+v", r)
	}
}

// TestGenSlowLayoutSaysHowLong: a run the layout's cap makes last seconds says so on
// stderr before the first ID (stderr is not a terminal here, so one line, not a
// progress line); a quick run says nothing.
func TestGenSlowLayoutSaysHowLong(t *testing.T) {
	// 2 sequence bits per 1 s tick: 4 IDs a second, so 40 IDs take about 10 s.
	const slow = "time:41:1s:2020-01-01T00:00:00Z,worker:10,seq:2"
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := cliContext(t, ctx, "", "gen", "--layout", slow, "--node", "worker=1", "-n", "40")
	if !strings.HasPrefix(r.stderr, "flurry: gen: 40 IDs at the layout's cap of 4 IDs/s take about 10s\n") {
		t.Errorf("stderr %q lacks the time the run takes", r.stderr)
	}
	if r.code != 130 {
		t.Errorf("exit code %d, want 130 (interrupted)", r.code)
	}
	if r := cli(t, "", "gen", "--layout", slow, "--node", "worker=1", "-n", "4"); r.code != 0 || r.stderr != "" {
		t.Errorf("a run under a second: %+v", r)
	}
	for _, c := range []struct {
		n    uint64
		rate float64
		want time.Duration
	}{{0, 4, 0}, {40, 0, 0}, {40, 4, 10 * time.Second}, {41, 4, 11 * time.Second}, {1e6, 4096e3, time.Second}, {1 << 62, 1e-9, time.Duration(math.MaxInt64).Truncate(time.Second)}} {
		if got := leastDuration(c.n, c.rate); got != c.want {
			t.Errorf("leastDuration(%d, %g) = %v, want %v", c.n, c.rate, got, c.want)
		}
	}
}
