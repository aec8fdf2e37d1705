// Package model checks two Promela models with SPIN: lease.pml, the lease protocol,
// and redisplain.pml, redisgen's plain path. The real protocol must pass an
// exhaustive search, and every known-bad variant must give a counterexample.
// docs/correctness.md explains the models and their numbers.
package model

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// run is one check of a model: the -D flags it is generated with, and, for a
// known-bad variant, the assertion pan must report as violated.
type run struct {
	name  string
	flags []string
	fails string // "" for the real protocol; else a substring of the violated assertion
}

const (
	i1 = "(pend[h]!=w_tick)||(ptok[h]==w_tok)"
	i2 = "pend[h]<=s_mark"
	i4 = "pex[h]||((s_tok==ptok[h])&&("
	// dup is redisplain.pml's invariant: no (node value, slot) is taken twice.
	dup = "id!=w_id"
)

var (
	one  = []string{"-DN=1", "-DHORIZON=9", "-DRESTARTS=0", "-DMAXACQ=1"}
	two  = []string{"-DN=2", "-DHORIZON=6", "-DRESTARTS=0"}
	long = []string{"-DN=2", "-DHORIZON=8", "-DRESTARTS=0"}
)

func with(base []string, more ...string) []string {
	return append(append([]string{}, base...), more...)
}

var leaseRuns = []run{
	// The real protocol: exhaustive, no error.
	{"protocol/one-holder", one, ""},
	{"protocol/two-holders", two, ""},
	{"protocol/restart", []string{"-DN=2", "-DHORIZON=3", "-DRESTARTS=1"}, ""},
	// Known-bad variants: each must break the invariant named.
	{"bad/fence-from-reply", with(one, "-DBUG_REPLY"), i4},
	{"bad/grant-before-write", with(one, "-DBUG_NORESERVE"), i2},
	{"bad/no-plus-one", with(long, "-DBUG_NOPLUS1"), i1},
	{"bad/release-above", with(long, "-DBUG_RELEASE_ABOVE"), i2},
	{"bad/renew-without-token", with(two, "-DBUG_NOTOKEN"), i4},
	{"bad/lost-write", with(long, "-DBUG_LOSTWRITE"), i2},
	{"bad/store-clock-step", with(one, "-DBUG_STORESTEP"), i4},
	{"bad/margin-too-small", with(one, "-DMARGIN=1"), i4},
	{"bad/drift-too-large", with(one, "-DDRIFT=2"), i4},
	{"bad/pause-too-long", with(one, "-DPAUSE=2"), i4},
}

var (
	stored  = regexp.MustCompile(`(\d+) states, stored`)
	matched = regexp.MustCompile(`(\d+) states, matched`)
	errs    = regexp.MustCompile(`errors: (\d+)`)
	memory  = regexp.MustCompile(`([\d.]+)\s+total actual memory usage`)
	elapsed = regexp.MustCompile(`elapsed time ([\d.e+]+) seconds`)
	depth   = regexp.MustCompile(`depth reached (\d+)`)
)

func tools(t *testing.T) {
	for _, tool := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " not installed (Debian: apt-get install spin gcc); the SPIN models are not checked"
			if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
				t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
			}
			t.Skip(msg)
		}
	}
}

// redisplain.pml's configurations: two primaries holding values 0 and 1; one
// holding value 0 and one holding none, the operator moving it; a primary and
// its replica, which takes over.
var (
	twoValues = []string{"-DH1=1", "-DOPS=0", "-DNG=1", "-DHORIZON=4"}
	move      = []string{"-DNG=1", "-DHORIZON=6"}
	failover  = []string{"-DREPLICA", "-DNG=1", "-DHORIZON=5"}
)

var plainRuns = []run{
	// The real protocol: exhaustive, no error.
	{"protocol/two-values", twoValues, ""},
	{"protocol/move", move, ""},
	{"protocol/move-flight", []string{"-DNG=2", "-DHORIZON=3"}, ""},
	{"protocol/failover", []string{"-DREPLICA", "-DNG=1", "-DHORIZON=8", "-DW=4", "-DFAILOVER=5"}, ""},
	{"protocol/failover-flight", []string{"-DREPLICA", "-DNG=2", "-DHORIZON=4"}, ""},
	// Known-bad variants and failed assumptions: each must issue an ID twice.
	{"bad/shared-field", with(twoValues, "-DBUG_SHARED_FIELD"), dup},
	{"bad/no-window", with(failover, "-DBUG_NOWINDOW"), dup},
	{"bad/no-tick", with(failover, "-DBUG_NOTICK"), dup},
	{"bad/failover-within-tick", with(failover, "-DFAILOVER=1"), dup},
	{"bad/failover-within-window", with(failover, "-DFAILOVER=2"), dup},
	{"bad/gap-one-tick", with(move, "-DGAP=1"), dup},
	{"bad/too-many-strays", []string{"-DNG=1", "-DHORIZON=5", "-DBT=2", "-DSTRAY=3"}, dup},
}

func TestLeaseModel(t *testing.T) {
	verify(t, "lease.pml", leaseRuns)
}

func TestRedisPlainModel(t *testing.T) {
	verify(t, "redisplain.pml", plainRuns)
}

// verify checks every run of a model: the real protocol completes an exhaustive
// search without error, a known-bad variant breaks the assertion named.
func verify(t *testing.T, model string, runs []run) {
	if testing.Short() {
		t.Skip("-short: the SPIN model checks take minutes of CPU; run: make model")
	}
	tools(t)
	src, err := filepath.Abs(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			out := check(t, src, r.flags)
			m := func(re *regexp.Regexp) string {
				if s := re.FindStringSubmatch(out); s != nil {
					return s[1]
				}
				return "?"
			}
			t.Logf("%s: %s states stored, %s matched, depth %s, %s MB, %s s",
				strings.Join(r.flags, " "), m(stored), m(matched), m(depth), m(memory), m(elapsed))
			if strings.Contains(out, "max search depth too small") {
				t.Fatalf("the search was cut short by the depth limit:\n%s", out)
			}
			if r.fails == "" {
				if m(errs) != "0" || strings.Contains(out, "assertion violated") || strings.Contains(out, "pan:1:") {
					t.Fatalf("the real protocol broke an invariant:\n%s", out)
				}
				if strings.Contains(out, "Search not completed") || m(stored) == "?" {
					t.Fatalf("the search did not complete:\n%s", out)
				}
				return
			}
			if m(errs) != "1" || !strings.Contains(out, "assertion violated") {
				t.Fatalf("no counterexample for a known-bad variant:\n%s", out)
			}
			if !strings.Contains(out, r.fails) {
				t.Fatalf("the counterexample breaks another assertion than %q:\n%s", r.fails, out)
			}
		})
	}
}

// check generates, compiles and runs the verifier for one set of flags in a
// temporary directory, and returns pan's output.
func check(t *testing.T, src string, flags []string) string {
	dir := t.TempDir()
	sh := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil && name != "./pan" {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	sh("spin", append(append([]string{"-a"}, flags...), src)...)
	// -O1: under load gcc -O2 takes ~22 s per variant, -O1 ~7 s, for a verifier about as fast.
	sh("gcc", "-O1", "-DSAFETY", "-w", "-o", "pan", "pan.c")
	return sh("./pan", "-m100000")
}
