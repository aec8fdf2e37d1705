package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// result is what one in-process run of the CLI gave.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the command line args in process with stdin as standard input.
func cli(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	return cliContext(t, context.Background(), stdin, args...)
}

func cliContext(t testing.TB, ctx context.Context, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// wantOneLineError checks a failed run: the exit code, nothing on stdout, and one
// "flurry: " line on stderr that contains each of wants.
func wantOneLineError(t *testing.T, r result, code int, wants ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "flurry: ") || !strings.HasSuffix(r.stderr, "\n") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q is not one line starting with flurry:", r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q lacks %q", r.stderr, w)
		}
	}
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestRootUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "bogus" (see 'flurry --help')`},
		{[]string{"gne"}, `did you mean "gen"?`},
		{[]string{"gen", "--bogus"}, "unknown flag: --bogus (see 'flurry gen --help')"},
		{[]string{"gen", "extra"}, `gen takes no arguments, got "extra"`},
		{[]string{"gen", "-n", "abc"}, `"abc" is not a number`},
		{[]string{"gen", "-n", "1.5"}, "not a whole number"},
		{[]string{"gen", "-n", "-3"}, "is negative"},
		{[]string{"gen", "--overflow", "spin"}, "want one of wait, borrow"},
		{[]string{"gen", "--max-drift", "5ms"}, "--max-drift applies only with --overflow borrow"},
		{[]string{"gen", "--random-below", "10"}, "--random-below applies only with --start random"},
		{[]string{"version", "x"}, "version takes no arguments"},
		{[]string{"plan", "--rate", "5"}, "--years is required"},
		{[]string{"plan", "--years", "5"}, "--rate is required"},
		{[]string{"plan", "--years", "5", "--rate", "5", "--nodes", "4", "--node", "a=2"}, "either --nodes or --node"},
		{[]string{"plan", "--years", "5", "--rate", "5", "--node", "machine"}, "write name=count"},
		{[]string{"plan", "--years", "5", "--rate", "5", "--epoch", "soon"}, `--epoch: "soon" is neither`},
		{[]string{"plan", "--years", "x", "--rate", "5"}, `"x" is not a number`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			wantOneLineError(t, cli(t, "", tc.args...), 2, tc.want)
		})
	}
}

func TestRootHelpAndExamples(t *testing.T) {
	r := cli(t, "")
	if r.code != 0 || !strings.Contains(r.stdout, "Available Commands:") || r.stderr != "" {
		t.Errorf("flurry with no arguments: %+v", r)
	}
	root := newRootCmd(io.Discard, io.Discard)
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			continue
		}
		if c.Example == "" || c.Short == "" || c.Long == "" {
			t.Errorf("%s has no example, short or long help", c.Name())
		}
		r := cli(t, "", c.Name(), "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:\n  flurry "+c.Name()) {
			t.Errorf("%s --help: %+v", c.Name(), r)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1", 1, true}, {"1000000", 1000000, true}, {"1e6", 1000000, true}, {"1_000_000", 1000000, true},
		{"2.5e3", 2500, true}, {"0", 0, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"1e19", 0, false}, {"-1", 0, false}, {"1.5", 0, false}, {"NaN", 0, false}, {"", 0, false}, {"x", 0, false},
	} {
		got, err := parseCount(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCount(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestOneLine(t *testing.T) {
	err := &usageError{err: io.ErrUnexpectedEOF}
	if got := oneLine(err); got != "unexpected EOF" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine(errString("flurry: a\n  b\r\nc: flurry: d")); got != "a; b; c: d" {
		t.Errorf("oneLine = %q", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
