// Command testall is the README's test command: it runs flurry's short test set
// with go test and ends with one line that says what passed, what was skipped and
// why, and where the full set is.
//
//	go run ./verify/cmd/testall                  # the short set of every package
//	go run ./verify/cmd/testall ./lease/...      # of some packages
//	go run ./verify/cmd/testall -run TestX ./client
//	go run ./verify/cmd/testall -v               # every test's output too
//
// It runs `go test -json -short -count=1 -tags flurry_full` (plus the arguments
// given, ./... when none names a package) and prints what go test prints without
// -v: a line per package, and the output of each test that failed. A machine with
// Go alone passes it: a test whose engine (PostgreSQL, MariaDB, Redis, etcd) does
// not answer, whose tool (spin, chromium, redis-server, ...) is missing or that
// needs root skips, naming what it lacks; -short leaves out the tests of minutes
// and those that change the machine's network namespaces. FLURRY_TEST_REQUIRE=1
// (CI) turns the skips for a missing engine, tool or root into failures.
//
// The last line, for example:
//
//	flurry tests: 1380 passed, 140 skipped: PostgreSQL unreachable at 127.0.0.1:5432 (66), -short (11), ...; 2m10s; the full set: make test-full
//
// Before it, the skipped tests are listed by reason. A skip's reason is its
// message up to the first "; " or " (", so messages that differ only in their
// advice or detail count together; on the summary line, the reasons that start
// with "-short:" count as one, as do the helper processes' entry points
// ("helper process of another test: ..."). testall exits with go test's status.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// module is the prefix testall strips from package paths in what it prints.
const module = "github.com/flurryid/flurry"

// fullSet is where the summary line sends the reader for what -short leaves out.
const fullSet = "make test-full"

func main() {
	o, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "testall:", err)
		os.Exit(2)
	}
	args := o.goTestArgs()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := exec.CommandContext(ctx, "go", args...) // the go that ran go run, on PATH
	cmd.Stderr = os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testall:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "testall: go %s\n", strings.Join(args, " "))
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testall:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout, o.verbose)
	readErr := s.read(out)
	waitErr := cmd.Wait()
	s.finish(time.Since(start))
	if readErr != nil {
		fmt.Fprintln(os.Stderr, "testall: reading go test -json:", readErr)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(waitErr, &ee):
		os.Exit(cmp.Or(ee.ExitCode(), 1))
	case waitErr != nil:
		fmt.Fprintln(os.Stderr, "testall:", waitErr)
		os.Exit(2)
	case readErr != nil || s.failed > 0:
		os.Exit(1)
	}
}

// options are testall's own flags; every other argument goes to go test.
type options struct {
	verbose, race, long bool
	tags                string
	timeout             time.Duration
	rest                []string // for go test
}

// parseArgs takes testall's flags out of args, wherever they are, and leaves the
// rest (go test's flags and packages) in order.
func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet("testall", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./verify/cmd/testall [-v] [-race] [-long] [-tags T] [-timeout D] [go test flags] [packages]\n\n")
		fs.PrintDefaults()
	}
	var o options
	fs.BoolVar(&o.verbose, "v", false, "print every test's output, not only that of failed tests")
	fs.BoolVar(&o.race, "race", false, "build with the race detector (needs cgo on most platforms)")
	fs.BoolVar(&o.long, "long", false, "leave out -short: the tests of minutes too (the harness scenario, clusters, the browser, release builds) and those that change the machine's network")
	fs.StringVar(&o.tags, "tags", "flurry_full", "build tags (empty: the lean build)")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "go test -timeout, per package")
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || fs.Lookup(name) == nil && name != "h" && name != "help" {
			o.rest = append(o.rest, a)
			if strings.HasPrefix(a, "-") && !hasValue && takesValue(name) && i+1 < len(args) {
				i++
				o.rest = append(o.rest, args[i])
			}
			continue
		}
		one := []string{a}
		if !hasValue && (name == "tags" || name == "timeout") && i+1 < len(args) {
			i++
			one = append(one, args[i])
		}
		if err := fs.Parse(one); err != nil {
			return o, err
		}
	}
	return o, nil
}

// goTestArgs returns the arguments of go test.
func (o options) goTestArgs() []string {
	args := []string{"test", "-json", "-count=1", "-timeout", o.timeout.String()}
	if !o.long {
		args = append(args, "-short")
	}
	if o.race {
		args = append(args, "-race")
	}
	if o.tags != "" {
		args = append(args, "-tags", o.tags)
	}
	args = append(args, o.rest...)
	if !namesPackage(o.rest) {
		args = append(args, "./...")
	}
	return args
}

// namesPackage reports whether go test arguments include a package pattern: an
// argument that is not a flag and not a flag's value.
func namesPackage(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return true
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && takesValue(name) {
			i++ // the flag's value
		}
	}
	return false
}

// takesValue reports whether a go test flag takes a separate value; the boolean
// ones are listed, so that an unknown flag is taken to take one.
func takesValue(name string) bool {
	switch strings.TrimPrefix(name, "test.") {
	case "v", "race", "short", "failfast", "json", "cover", "benchmem", "a", "n", "x", "msan", "asan", "fullpath", "trimpath", "work", "i":
		return false
	}
	return true
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail
}

// summary follows go test -json's events: it prints as go test does without -v and
// counts the tests' outcomes.
type summary struct {
	w       io.Writer
	verbose bool

	passed, failed, skipped int
	failures                []string            // "pkg TestX"
	skips                   map[string][]string // reason -> "pkg TestX"
	output                  map[string][]string // "pkg\x00Test" -> its output so far
	pkgFailed               []string            // packages that failed outside any test
}

func newSummary(w io.Writer, verbose bool) *summary {
	return &summary{w: w, verbose: verbose, skips: map[string][]string{}, output: map[string][]string{}}
}

func short(pkg string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// read consumes go test -json output until it ends.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event: go test prints some errors (a package that does
			// not build) as plain text.
			fmt.Fprintf(s.w, "%s\n", line)
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

// add handles one event.
func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		s.pkgFailed = append(s.pkgFailed, short(e.ImportPath)+" (build failed)")
		return
	}
	if e.Test == "" {
		s.packageEvent(e)
		return
	}
	key := e.Package + "\x00" + e.Test
	name := short(e.Package) + " " + e.Test
	switch e.Action {
	case "output":
		if s.verbose {
			fmt.Fprint(s.w, e.Output)
		}
		s.output[key] = append(s.output[key], e.Output)
	case "pass":
		s.passed++
		delete(s.output, key)
	case "skip":
		s.skipped++
		reason := skipReason(s.output[key])
		s.skips[reason] = append(s.skips[reason], name)
		delete(s.output, key)
	case "fail":
		s.failed++
		s.failures = append(s.failures, name)
		if !s.verbose {
			for _, l := range s.output[key] {
				fmt.Fprint(s.w, l)
			}
		}
		delete(s.output, key)
	}
}

// packageEvent handles an event of a package rather than of one of its tests.
func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "output":
		// go test's own lines: "ok  pkg 1.2s", "FAIL pkg", "--- FAIL" of a
		// panic, a timeout's goroutine dump. PASS and FAIL alone repeat what
		// the package line says.
		o := strings.TrimSpace(e.Output)
		if o == "PASS" || o == "FAIL" || strings.HasPrefix(o, "testing: warning: no tests to run") {
			return
		}
		if strings.HasPrefix(e.Output, "ok  \t") || strings.HasPrefix(e.Output, "FAIL\t") || strings.HasPrefix(e.Output, "?   \t") {
			if strings.HasPrefix(e.Output, "?   \t") && !s.verbose {
				return // no test files
			}
			e.Output = strings.Replace(e.Output, e.Package, short(e.Package), 1)
		}
		fmt.Fprint(s.w, e.Output)
	case "fail":
		// A package whose tests all passed can still fail: a panic after the
		// tests, a timeout, a TestMain that exits non-zero, a build error.
		if !slices.ContainsFunc(s.failures, func(f string) bool { return strings.HasPrefix(f, short(e.Package)+" ") }) {
			s.pkgFailed = append(s.pkgFailed, short(e.Package))
		}
	}
}

// skipReason returns the reason a skipped test gave: the last message it logged
// (t.Skip logs its arguments), cut at the first "; " or " (", without the
// file:line prefix. A test that skipped without a message gets "no reason given".
func skipReason(output []string) string {
	msg := ""
	for _, l := range output {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		// "name_test.go:12: message": the start of a logged message.
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") && !strings.Contains(t[:i], " ") {
			msg = t[i+2:]
		}
	}
	if i := strings.Index(msg, "; "); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, " ("); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "no reason given"
	}
	return msg
}

// finish prints the skips by reason, the failures, and the summary line.
func (s *summary) finish(took time.Duration) {
	reasons := make([]string, 0, len(s.skips))
	for r := range s.skips {
		reasons = append(reasons, r)
	}
	// Most skips first, then by reason, so that the line reads the same each run.
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(s.skips[b]), len(s.skips[a])), strings.Compare(a, b))
	})
	if len(reasons) > 0 {
		fmt.Fprintln(s.w, "\nskipped, by reason:")
		for _, r := range reasons {
			fmt.Fprintf(s.w, "  %s (%d): %s\n", r, len(s.skips[r]), list(s.skips[r], 6))
		}
	}
	var b strings.Builder
	b.WriteString("flurry tests: ")
	if n := s.failed + len(s.pkgFailed); n > 0 {
		fmt.Fprintf(&b, "FAILED: %s; ", list(append(slices.Clone(s.failures), s.pkgFailed...), 8))
		if s.failed > 0 {
			fmt.Fprintf(&b, "%d failed, ", s.failed)
		}
	}
	fmt.Fprintf(&b, "%d passed, %d skipped", s.passed, s.skipped)
	// The line names each reason but folds the -short ones, and the helper
	// processes, into one count each: the list above has them all.
	var cats []string
	n := map[string]int{}
	for _, r := range reasons {
		c := category(r)
		if n[c] == 0 {
			cats = append(cats, c)
		}
		n[c] += len(s.skips[r])
	}
	slices.SortStableFunc(cats, func(a, b string) int { return cmp.Compare(n[b], n[a]) })
	for i, c := range cats {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%d)", c, n[c])
	}
	fmt.Fprintf(&b, "; %s; the full set: %s", took.Round(time.Second), fullSet)
	fmt.Fprintln(s.w, b.String())
}

// category returns what the summary line counts a skip's reason under: "-short"
// for the tests -short leaves to the full set ("-short: starts a browser; run:
// ..."), "helper processes" for tests that are the entry point of a process
// another test starts ("helper process of another test: ..."), and else the
// reason itself.
func category(reason string) string {
	switch {
	case strings.HasPrefix(reason, "-short:"):
		return "-short"
	case strings.HasPrefix(reason, "helper process"):
		return "helper processes"
	}
	return reason
}

// list joins names, at most max of them and a count of the rest.
func list(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
