package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGoTestArgs(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, "test -json -count=1 -timeout 20m0s -short -tags flurry_full ./..."},
		{[]string{"./lease/..."}, "test -json -count=1 -timeout 20m0s -short -tags flurry_full ./lease/..."},
		{[]string{"-run", "TestX", "./client"}, "test -json -count=1 -timeout 20m0s -short -tags flurry_full -run TestX ./client"},
		{[]string{"-run", "TestX"}, "test -json -count=1 -timeout 20m0s -short -tags flurry_full -run TestX ./..."},
		{[]string{"-v", "-race", "-long", "-tags", "", "-timeout=5m", "-run=TestY"}, "test -json -count=1 -timeout 5m0s -race -run=TestY ./..."},
		{[]string{"./server", "-tags=flurry_redis", "-v"}, "test -json -count=1 -timeout 20m0s -short -tags flurry_redis ./server"},
	} {
		o, err := parseArgs(tc.in)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tc.in, err)
			continue
		}
		if got := strings.Join(o.goTestArgs(), " "); got != tc.want {
			t.Errorf("parseArgs(%q): go %s\nwant go %s", tc.in, got, tc.want)
		}
	}
	if o, _ := parseArgs([]string{"-v"}); !o.verbose {
		t.Error("-v does not make testall verbose")
	}
	if _, err := parseArgs([]string{"-timeout", "soon"}); err == nil {
		t.Error("-timeout soon: no error")
	}
}

func TestSkipReason(t *testing.T) {
	for _, tc := range []struct {
		out  []string
		want string
	}{
		{[]string{"=== RUN   TestX\n", "    x_test.go:12: PostgreSQL unreachable at 127.0.0.1:5432 (dial tcp: refused); start it or set FLURRY_TEST_POSTGRES\n", "--- SKIP: TestX (0.00s)\n"},
			"PostgreSQL unreachable at 127.0.0.1:5432"},
		{[]string{"=== RUN   TestX\n", "    x_test.go:3: a log line: not the reason\n", "    testenv.go:61: spin not installed; apt-get install spin\n", "--- SKIP: TestX (0.00s)\n"},
			"spin not installed"},
		{[]string{"=== RUN   TestX/sub\n", "    --- SKIP: TestX/sub (0.00s)\n"}, "no reason given"},
		{[]string{"    y_test.go:9: -short: builds a release\n", "        with more lines: here\n"}, "-short: builds a release"},
	} {
		if got := skipReason(tc.out); got != tc.want {
			t.Errorf("skipReason(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	const p = module + "/lease/sqlstore"
	events := []event{
		{Action: "start", Package: p},
		{Action: "run", Package: p, Test: "TestA"},
		{Action: "output", Package: p, Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "output", Package: p, Test: "TestA", Output: "    a_test.go:1: PostgreSQL unreachable at 127.0.0.1:5432 (refused); start it\n"},
		{Action: "skip", Package: p, Test: "TestA"},
		{Action: "output", Package: p, Test: "TestB", Output: "    b_test.go:1: PostgreSQL unreachable at 127.0.0.1:5432 (timeout); start it\n"},
		{Action: "skip", Package: p, Test: "TestB"},
		{Action: "output", Package: p, Test: "TestC", Output: "    c_test.go:1: spin not installed (Debian package spin)\n"},
		{Action: "skip", Package: p, Test: "TestC"},
		{Action: "output", Package: p, Test: "TestF", Output: "    f_test.go:1: -short: starts a browser; run: go test ./x\n"},
		{Action: "skip", Package: p, Test: "TestF"},
		{Action: "output", Package: p, Test: "TestG", Output: "    g_test.go:1: -short: runs a release build\n"},
		{Action: "skip", Package: p, Test: "TestG"},
		{Action: "output", Package: p, Test: "TestH", Output: "    g_test.go:1: -short: runs a release build\n"},
		{Action: "skip", Package: p, Test: "TestH"},
		{Action: "output", Package: p, Test: "TestD", Output: "    d_test.go:1: passing chatter\n"},
		{Action: "pass", Package: p, Test: "TestD"},
		{Action: "output", Package: p, Test: "TestE", Output: "    e_test.go:7: got 2, want 3\n"},
		{Action: "fail", Package: p, Test: "TestE"},
		{Action: "output", Package: p, Output: "FAIL\n"},
		{Action: "output", Package: p, Output: "FAIL\t" + p + "\t0.5s\n"},
		{Action: "fail", Package: p},
		{Action: "output", Package: module + "/clock", Output: "ok  \t" + module + "/clock\t0.1s\n"},
		{Action: "pass", Package: module + "/clock"},
		{Action: "output", Package: module + "/x", Output: "panic: boom\n"},
		{Action: "fail", Package: module + "/x"},
	}
	var b strings.Builder
	s := newSummary(&b, false)
	for _, e := range events {
		s.add(e)
	}
	s.finish(90 * time.Second)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"    e_test.go:7: got 2, want 3",
		"FAIL\tlease/sqlstore\t0.5s",
		"ok  \tclock\t0.1s",
		"panic: boom",
		"",
		"skipped, by reason:",
		"  -short: runs a release build (2): lease/sqlstore TestG, lease/sqlstore TestH",
		"  PostgreSQL unreachable at 127.0.0.1:5432 (2): lease/sqlstore TestA, lease/sqlstore TestB",
		"  -short: starts a browser (1): lease/sqlstore TestF",
		"  spin not installed (1): lease/sqlstore TestC",
		"flurry tests: FAILED: lease/sqlstore TestE, x; 1 failed, 1 passed, 6 skipped: -short (3), PostgreSQL unreachable at 127.0.0.1:5432 (2), spin not installed (1); 1m30s; the full set: make test-full",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
