package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/snowflake"
)

// Lease tests use datacenter values 2 and up, so the leased node values never meet
// the static ones of the other gen tests in the in-process guard.

var startLine = regexp.MustCompile(`^flurry: gen: leased node value (\d+) \(([^)]*)\) in scope (\S+) as \S+; (.*)$`)

// leasedRun checks a gen --lease run that succeeded: its first stderr line names the
// value held, and every ID decodes to that node. It returns the value and the IDs.
func leasedRun(t *testing.T, r result, n int, l *layout.Layout, wantScope string) (int64, []flurry.ID) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("gen --lease: %+v", r)
	}
	first, _, _ := strings.Cut(r.stderr, "\n")
	m := startLine.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("first stderr line %q does not name the leased value", first)
	}
	if m[3] != wantScope {
		t.Errorf("scope %q, want %q", m[3], wantScope)
	}
	value, _ := strconv.ParseInt(m[1], 10, 64)
	node, err := l.ParseNodeValues(m[2])
	if err != nil {
		t.Fatal(err)
	}
	ids := parseIDs(t, r.stdout, n)
	for _, id := range ids {
		if p, err := l.Decompose(id); err != nil || p.Nodes != node {
			t.Fatalf("ID %d decodes to %+v, %v; want node %s", id, p, err, m[2])
		}
	}
	return value, ids
}

type leaseListRow struct {
	Scope     string `json:"scope"`
	Value     int64  `json:"value"`
	Held      bool   `json:"held"`
	Owner     string `json:"owner"`
	Expires   string `json:"expires"`
	Mark      string `json:"mark"`
	MarkMs    int64  `json:"mark_ms"`
	MarkAgeMs *int64 `json:"mark_age_ms"`
}

func leaseList(t *testing.T, args ...string) []leaseListRow {
	t.Helper()
	r := cli(t, "", append([]string{"lease", "list", "--json"}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("lease list: %+v", r)
	}
	var rows []leaseListRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("lease list --json: %v\n%s", err, r.stdout)
	}
	return rows
}

func TestGenLease(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	l, _ := layout.Lookup("twitter")
	r := cli(t, "", "gen", "--lease", url, "-n", "1000", "--node", "datacenter=2")
	value, ids := leasedRun(t, r, 1000, l, "default/datacenter=2")
	if p, _ := l.Decompose(ids[0]); p.Nodes != (layout.NodeValues{2, value}) {
		t.Errorf("IDs carry node %v; the leased value is worker %d", p.Nodes, value)
	}
	if !strings.HasSuffix(strings.TrimSpace(r.stderr), "the value has no mark (never used)") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line about a never-used value", r.stderr)
	}

	// After the run the value is released, with a mark at or above its last ID.
	rows := leaseList(t, url)
	if len(rows) != 1 || rows[0].Scope != "default/datacenter=2" || rows[0].Value != value || rows[0].Held || rows[0].Owner != "" {
		t.Fatalf("lease list after gen: %+v", rows)
	}
	last := l.TimeOf(ids[len(ids)-1])
	if rows[0].MarkMs < last.UnixMilli() || rows[0].Mark != formatMs(time.UnixMilli(rows[0].MarkMs)) || rows[0].MarkAgeMs == nil {
		t.Errorf("mark %+v is not at or above the last ID's time %s", rows[0], last)
	}

	// The table says the same.
	r = cli(t, "", "lease", "list", url)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("lease list: %+v", r)
	}
	ls := lines(r.stdout)
	if len(ls) != 2 || !strings.HasPrefix(ls[0], "SCOPE ") || !strings.Contains(ls[0], "MARK AGE") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	if f := strings.Fields(ls[1]); len(f) < 7 || f[0] != "default/datacenter=2" || f[1] != strconv.FormatInt(value, 10) ||
		f[2] != "free" || f[3] != "-" || f[4] != "-" || f[5] != rows[0].Mark {
		t.Errorf("row %q", ls[1])
	}
}

func TestGenLeaseFixedStartsAboveMark(t *testing.T) {
	// Two runs in a row with one fixed value: the second starts above the first's mark.
	url := "file://" + t.TempDir()
	l, _ := layout.Lookup("twitter")
	args := []string{"gen", "--lease", url, "--node", "datacenter=3", "--fixed", "7", "--ttl", "1s", "--window", "100ms", "-n", "500"}
	_, first := leasedRun(t, cli(t, "", args...), 500, l, "default/datacenter=3")
	r := cli(t, "", args...)
	_, second := leasedRun(t, r, 500, l, "default/datacenter=3")
	if !strings.Contains(r.stderr, "; issuing above its mark ") {
		t.Errorf("second run's stderr %q does not name the mark", r.stderr)
	}
	if second[0] <= first[len(first)-1] {
		t.Errorf("second run starts at %d, not above the first run's last ID %d", second[0], first[len(first)-1])
	}
	if p, _ := l.Decompose(second[0]); p.Nodes != (layout.NodeValues{3, 7}) {
		t.Errorf("node %v, want datacenter=3,worker=7", p.Nodes)
	}
}

func TestGenLeaseFields(t *testing.T) {
	url := "file://" + t.TempDir()
	tw, _ := layout.Lookup("twitter")
	// --lease-fields leases worker only; datacenter is neither given nor leased: 0.
	r := cli(t, "", "gen", "--lease", url, "--lease-fields", "worker", "-n", "10")
	leasedRun(t, r, 10, tw, "default/datacenter=0")
	lay := "time:41:1ms:2020-01-01T00:00:00Z,region:3,zone:3,host:4,seq:12"
	l, _ := layout.Parse(lay)
	// By default every node field not named in --node is leased.
	r = cli(t, "", "gen", "--lease", url, "--layout", lay, "--node", "region=5", "--scope", "orders", "-n", "10")
	leasedRun(t, r, 10, l, "orders/region=5")
	// Without --node, every node field.
	r = cli(t, "", "gen", "--lease", url, "--layout", lay, "-n", "10")
	leasedRun(t, r, 10, l, "default")
	if strings.Contains(r.stderr, "no --node given") {
		t.Errorf("gen --lease without --node must not warn about node 0: %q", r.stderr)
	}
	// --scope lists that scope and those under it.
	rows := leaseList(t, "--scope", "orders", url)
	if len(rows) != 1 || rows[0].Scope != "orders/region=5" {
		t.Errorf("lease list --scope orders: %+v", rows)
	}
	if rows := leaseList(t, url); len(rows) != 3 {
		t.Errorf("lease list: %+v", rows)
	}
}

func TestGenLeaseTwoFieldsGiven(t *testing.T) {
	// Two node fields not leased: the session names the pool with one path segment
	// per field.
	url := "file://" + t.TempDir()
	lay := "time:41:1ms:2020-01-01T00:00:00Z,region:3,zone:3,host:4,seq:12"
	l, _ := layout.Parse(lay)
	r := cli(t, "", "gen", "--lease", url, "--layout", lay, "--node", "region=4,zone=1", "-n", "10")
	leasedRun(t, r, 10, l, "default/region=4/zone=1")
}

func TestGenLeaseErrors(t *testing.T) {
	url := "file://" + t.TempDir()
	for _, tc := range []struct {
		code int
		args []string
		want string
	}{
		{2, []string{"--fixed", "3"}, "--fixed needs --lease URL"},
		{2, []string{"--node-from", "ordinal"}, "--node-from needs --lease URL"},
		{2, []string{"--scope", "x"}, "--scope applies only with --lease URL"},
		{2, []string{"--ttl", "3s"}, "--ttl applies only with --lease URL"},
		{2, []string{"--lease", ""}, "--lease needs a store URL"},
		{2, []string{"--lease", "URL", "--fixed", "1", "--node-from", "ip"}, "not both"},
		{2, []string{"--lease", "URL", "--fixed", "-1"}, "--fixed -1 is negative"},
		{2, []string{"--lease", "URL", "--node-from", "dns"}, "want one of ordinal, ip"},
		{2, []string{"--lease", "URL", "--node", "datacenter=4,worker=1"}, "--node gives every node field (datacenter, worker), so none is left to lease"},
		{2, []string{"--lease", "URL", "--node", "worker=1", "--lease-fields", "worker"}, "worker is also given in --node"},
		{2, []string{"--lease", "URL", "--lease-fields", "shard"}, `no node field "shard"; its node fields are datacenter, worker`},
		{2, []string{"--lease", "URL", "--lease-fields", "worker,worker"}, "worker is named twice"},
		{1, []string{"--lease", "URL", "--node", "datacenter=4", "--fixed", "32"}, "fixed value 32 is outside the pool 0..31"},
		{2, []string{"--lease", "URL", "--node", "datacenter=4", "--ttl", "500ms"}, "--ttl: ttl 500ms must be a whole number of milliseconds from 1s to 24h"},
		// Its deadlines overflowed int64 nanoseconds: gen held the value and never issued.
		{2, []string{"--lease", "URL", "--ttl", "2500000h"}, "from 1s to 24h"},
		{2, []string{"--lease", "URL", "--window", "2h"}, "--window: window 2h0m0s must be from 100ms to 1h"},
		{2, []string{"--lease", "URL", "--order", "newest"}, "want one of scope, value"},
		{2, []string{"--order", "value"}, "--order applies only with --lease URL"},
		{1, []string{"--lease", "URL", "--layout", "mastodon"}, "has no node field to lease"},
		{1, []string{"--lease", "bogus://x"}, `unknown store scheme "bogus"`},
		{1, []string{"--lease", "URL", "--scope", "a b"}, "use ASCII letters, digits and _-./:= only"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := []string{"gen"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "URL", url))
			}
			wantOneLineError(t, cli(t, "", args...), tc.code, tc.want)
		})
	}
}

func TestGenLeaseNodeFrom(t *testing.T) {
	url := "file://" + t.TempDir()
	r := cli(t, "", "gen", "--lease", url, "--node", "datacenter=5", "--node-from", "ip", "-n", "3")
	if _, err := lease.LocalIP(); err != nil {
		wantOneLineError(t, r, 1, "--node-from ip: ")
	} else {
		if r.code != 0 || !strings.HasPrefix(r.stderr, "flurry: warning: lease: node value derived from the IP address; ") {
			t.Errorf("--node-from ip: %+v", r)
		}
		parseIDs(t, r.stdout, 3)
	}
	r = cli(t, "", "gen", "--lease", url, "--node", "datacenter=5", "--node-from", "ordinal", "-n", "3")
	if r.code != 0 {
		wantOneLineError(t, r, 1, "--node-from ordinal: ", "does not end in -<ordinal>")
	}
}

func TestGenLeaseClosedPipe(t *testing.T) {
	// The reader leaves: gen ends quietly and releases the lease.
	url := "file://" + t.TempDir()
	var errb bytes.Buffer
	code := run(context.Background(), []string{"gen", "--lease", url, "--node", "datacenter=8", "-n", "1e6"}, nil,
		&failWriter{limit: 100 << 10, err: syscall.EPIPE}, &errb)
	if code != 0 || !strings.HasPrefix(errb.String(), "flurry: gen: leased node value 0 ") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit code %d, stderr %q", code, errb.String())
	}
	if rows := leaseList(t, url); len(rows) != 1 || rows[0].Held || rows[0].MarkMs == 0 {
		t.Errorf("after a closed pipe: %+v", rows)
	}
}

func TestGenLeaseInUse(t *testing.T) {
	// A live generator of this process holds the fixed value's node: gen refuses.
	url := "file://" + t.TempDir()
	l, _ := layout.Lookup("twitter")
	g, err := snowflake.New(snowflake.Options{Layout: l, Node: layout.NodeValues{6, 9}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	wantOneLineError(t, cli(t, "", "gen", "--lease", url, "--node", "datacenter=6", "--fixed", "9"), 1, "already in use")
	// The lease was released: the value is free.
	for _, row := range leaseList(t, url) {
		if row.Held {
			t.Errorf("value still held after gen failed: %+v", row)
		}
	}
}

func TestLeaseList(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	r := cli(t, "", "lease", "list", url)
	if r.code != 0 || r.stdout != "" || r.stderr != "flurry: lease list: no node value of the store has a record\n" {
		t.Errorf("empty store: %+v", r)
	}
	if rows := leaseList(t, url); len(rows) != 0 {
		t.Errorf("empty store: %+v", rows)
	}

	// A held value, as while a gen runs.
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	held, err := st.Acquire(ctx, "orders/datacenter=1", 32, "host-a/42", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	held, err = st.Renew(ctx, held, 10*time.Second, time.Now().Add(time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	rows := leaseList(t, url)
	if len(rows) != 1 || !rows[0].Held || rows[0].Owner != "host-a/42" || rows[0].Expires != formatMs(held.Expires) ||
		rows[0].MarkMs != held.Mark || rows[0].MarkAgeMs == nil || *rows[0].MarkAgeMs >= 0 {
		t.Errorf("held value: %+v (lease %+v)", rows, held)
	}
	r = cli(t, "", "lease", "list", "--scope", "orders", url)
	if r.code != 0 || !strings.Contains(r.stdout, " held ") || !strings.Contains(r.stdout, " host-a/42 ") ||
		!strings.Contains(r.stdout, formatMs(held.Expires)+" (in ") || !strings.Contains(r.stdout, " in 1h0m0s") {
		t.Errorf("table of a held value: %+v", r)
	}
	if rows := leaseList(t, "--scope", "ord", url); len(rows) != 0 {
		t.Errorf("--scope ord matched %+v", rows)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lease", "list"}, "lease list takes one store URL"},
		{[]string{"lease", "list", "a", "b"}, "got 2 arguments"},
		{[]string{"lease", "list", "--scope", "a b", url}, "--scope: lease: scope"},
		{[]string{"lease", "bogus"}, `unknown command "bogus" for "flurry lease"`},
	} {
		wantOneLineError(t, cli(t, "", tc.args...), 2, tc.want)
	}
	wantOneLineError(t, cli(t, "", "lease", "list", "nope://x"), 1, `unknown store scheme "nope"`)
	missing := filepath.Join(dir, "missing")
	wantOneLineError(t, cli(t, "", "lease", "list", "file://"+missing), 1, "no lease store at "+missing)
	if _, err := os.Stat(missing); err == nil {
		t.Error("lease list created the store's directory")
	}

	r = cli(t, "", "lease", "--help")
	understands := "This binary understands: etcd, file, leafzk, mysql, postgres, postgresql, redis, redis+sentinel, rediss, rediss+sentinel, sqlite, zk."
	if !buildtags.Full() {
		understands = "This binary understands: " + strings.Join(leaseurl.Schemes(), ", ") + "."
	}
	if r.code != 0 || !strings.Contains(r.stdout, "file:///var/lib/flurry/leases") || !strings.Contains(r.stdout, understands) {
		t.Errorf("lease --help: %+v", r)
	}
}

func TestGenClockSkew(t *testing.T) {
	t.Setenv(skewEnv, "1h")
	r := cli(t, "", "gen", "-n", "3", "--node", "worker=13")
	if r.code != 0 || r.stderr != "flurry: WARNING: FLURRY_CLOCK_SKEW=1h: this process's clock is shifted by 1h0m0s FOR TESTING; never set it in production\n" {
		t.Fatalf("skewed gen: %+v", r)
	}
	l, _ := layout.Lookup("twitter")
	if at := l.TimeOf(parseIDs(t, r.stdout, 3)[0]); at.Before(time.Now().Add(59 * time.Minute)) {
		t.Errorf("ID time %s is not an hour ahead", at)
	}
	t.Setenv(skewEnv, "soon")
	wantOneLineError(t, cli(t, "", "gen", "--node", "worker=13"), 1, `FLURRY_CLOCK_SKEW="soon" is not a duration`)
	t.Setenv(skewEnv, "0s")
	if r := cli(t, "", "gen", "--node", "worker=13"); r.code != 0 || r.stderr != "" {
		t.Errorf("zero skew: %+v", r)
	}
}

// errRewind makes a script issue IDs below those it issued before.
var errRewind = errors.New("rewind")

// script is a flurry.Source that replays errors and then issues IDs.
type script struct {
	steps []error // nil: issue the batch
	next  flurry.ID
}

func (s *script) Next(ctx context.Context) (flurry.ID, error) {
	var one [1]flurry.ID
	_, err := s.NextN(ctx, one[:])
	return one[0], err
}

func (s *script) NextN(_ context.Context, dst []flurry.ID) (int, error) {
	if len(s.steps) > 0 {
		err := s.steps[0]
		s.steps = s.steps[1:]
		if err == errRewind {
			s.next -= 3000 // as after a move to a lower node value
		} else if err != nil {
			return 0, err
		}
	}
	for i := range dst {
		s.next++
		dst[i] = s.next
	}
	return len(dst), nil
}

func TestGeneratePauses(t *testing.T) {
	lost := fmt.Errorf("%w: node worker=1: the lease was not renewed in time", lease.ErrLost)
	behind := &snowflake.ClockBehindError{Gap: time.Millisecond}
	other := errors.New("disk on fire")
	for _, tc := range []struct {
		name   string
		steps  []error
		pause  bool
		err    string
		paused int
	}{
		{"one episode", []error{lost, lost, behind, nil}, true, "", 1},
		{"two episodes", []error{lost, nil, behind, behind}, true, "", 2},
		{"other error ends", []error{lost, other}, true, "gen: after 0 of 10000 IDs: disk on fire", 1},
		{"static gen ends", []error{behind}, false, "gen: after 0 of 10000 IDs: snowflake: clock moved backwards", 0},
		{"lower IDs after a move are skipped", []error{nil, lost, errRewind, nil}, true, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := generate(context.Background(), &script{steps: tc.steps}, 10000, &out, &errb, tc.pause, 0)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
			if got := strings.Count(errb.String(), "flurry: gen: paused: "); got != tc.paused || strings.Count(errb.String(), "\n") != tc.paused {
				t.Errorf("stderr %q: %d pause lines, want %d", errb.String(), got, tc.paused)
			}
			if tc.paused > 0 && !strings.HasSuffix(errb.String(), "; waiting\n") {
				t.Errorf("stderr %q", errb.String())
			}
			if tc.err == "" {
				parseIDs(t, out.String(), 10000)
			}
		})
	}

	// Ctrl-C during a pause ends with 130.
	ctx, cancel := context.WithCancel(context.Background())
	steps := []error{lost}
	for range 100 {
		steps = append(steps, lost)
	}
	var errb syncBuffer
	go func() {
		for !strings.Contains(errb.String(), "paused") { // written before the first wait
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err := generate(ctx, &script{steps: steps}, 10, io.Discard, &errb, true, 0)
	if ee, ok := errors.AsType[*exitError](err); !ok || ee.code != 130 {
		t.Errorf("interrupted pause: %v", err)
	}
}

// syncBuffer is a bytes.Buffer that may be written and read from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLineHandler(t *testing.T) {
	var b syncBuffer
	h := newLineHandler(&b)
	log := slog.New(h).With("scope", "default")
	log.Info("lease: acquired node value", "value", 3)
	log.Warn("lease: every node value is held; waiting for one", "size", 32)
	log.Warn("lease: every node value is held; waiting for one", "size", 32)
	log.Error("lease: lost the node value", "err", errors.New("lease: lease lost"), "at", time.UnixMilli(1500).UTC())
	h.showInfo()
	log.Info("lease: acquired node value", "value", 4)
	log.Debug("not shown")
	log.Warn("lease: every node value is held; waiting for one", "size", 32)
	want := `flurry: warning: lease: every node value is held; waiting for one (scope=default size=32)
flurry: lease: lost the node value (scope=default err="lease: lease lost" at=1970-01-01T00:00:01.500Z)
flurry: lease: acquired node value (scope=default value=4)
flurry: warning: lease: every node value is held; waiting for one (scope=default size=32)
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234 * time.Millisecond:               "1.2s ago",
		-1960 * time.Millisecond:              "in 2s",
		90*time.Second + 400*time.Millisecond: "1m30s ago",
		50 * time.Hour:                        "50h0m0s ago",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
}

// countWriter counts the lines written to it and keeps the last complete one.
type countWriter struct {
	mu    sync.Mutex
	lines int
	last  []byte
	part  []byte
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	if i := bytes.LastIndexByte(w.part, '\n'); i >= 0 {
		w.lines += bytes.Count(w.part[:i+1], []byte{'\n'})
		j := bytes.LastIndexByte(w.part[:i], '\n')
		w.last = append(w.last[:0], w.part[j+1:i]...)
		w.part = append(w.part[:0], w.part[i+1:]...)
	}
	return len(p), nil
}

// waitFor polls cond until it holds, failing the test after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestGenLeaseLostPausesAndResumes(t *testing.T) {
	// Another owner takes the value (here: the test rewrites the lease's token in the
	// store's file). gen loses the lease, pauses, leases another value, goes on.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out countWriter
	var errb syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"gen", "--lease", "file://" + dir, "--node", "datacenter=7", "--ttl", "1s", "--window", "100ms", "-n", "1e12"}, nil, &out, &errb)
	}()
	waitFor(t, "the lease", func() bool { return strings.Contains(errb.String(), "leased node value 0 ") })
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("store files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f["values"].(map[string]any)["0"].(map[string]any)["token"] = "stolen"
	b, _ = json.Marshal(f)
	if err := os.WriteFile(files[0]+".test", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(files[0]+".test", files[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new lease", func() bool { return strings.Contains(errb.String(), "flurry: lease: acquired node value") })
	l, _ := layout.Lookup("twitter")
	waitFor(t, "IDs of the new value", func() bool {
		out.mu.Lock()
		defer out.mu.Unlock()
		id, err := flurry.ParseID(string(out.last))
		p, _ := l.Decompose(id)
		return err == nil && p.Nodes == layout.NodeValues{7, 1}
	})
	cancel()
	if c := <-code; c != 130 {
		t.Errorf("exit code %d, want 130", c)
	}
	se := errb.String()
	for _, want := range []string{
		"flurry: lease: lost the node value; the generator stopped",
		// The refusal names the cause when the loss is seen first, and the fence
		// when a call met it while the new value was being granted: either way a pause.
		"flurry: gen: paused: lease: lease lost: node datacenter=7,worker=0: ",
		"flurry: lease: acquired node value (scope=default/datacenter=7 value=1 ",
		"flurry: gen: interrupted after ",
	} {
		if !strings.Contains(se, want) {
			t.Errorf("stderr lacks %q:\n%s", want, se)
		}
	}
	// Value 1 was released on exit; value 0 is the "thief's" until it expires.
	for _, row := range leaseList(t, "file://"+dir) {
		if row.Value == 1 && row.Held {
			t.Errorf("value 1 still held after gen ended: %+v", row)
		}
	}
}
