// Package model checks Promela models with SPIN: lease.pml, the lease protocol,
// redisplain.pml, redisgen's plain path, and region.pml, the region guard
// (docs/multi-region.md). The real protocol must pass an
// exhaustive search, and every known-bad variant must give a counterexample.
// docs/correctness.md explains the models and their numbers. The longest
// exhaustive runs of lease.pml run only with FLURRY_MODEL_LONG=1 (some minutes of
// CPU and up to 1.5 GB of memory each).
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
	long  bool   // run only with FLURRY_MODEL_LONG=1: minutes of CPU and gigabytes
}

// longEnv turns on the long exhaustive runs (run.long).
const longEnv = "FLURRY_MODEL_LONG"

const (
	i1 = "(pend[h]!=w_tick)||(pkey[h]==w_key)"
	i2 = "pend[h]<=s_mark"
	i4 = "pex[h]||((s_tok==(pkey[h]/4))&&("
	// dup is redisplain.pml's invariant: no (node value, slot) is taken twice.
	dup = "id!=w_id"
)

// lease.pml's configurations. The defaults: TTL 6, margin 2, reservation 4 (the
// budget plus one interval, as long as the fence), renewal every 1, journal lead 2,
// DRIFT 1, PAUSE 1, a restart's clock up to 1 behind.
var (
	one  = []string{"-DN=1", "-DHORIZON=9", "-DRESTARTS=0", "-DMAXACQ=1"}
	two  = []string{"-DN=2", "-DHORIZON=6", "-DRESTARTS=0"}
	long = []string{"-DN=2", "-DHORIZON=8", "-DRESTARTS=0"}
	// noJournal is a session without a Journal (the default), renewing every 2.
	noJournal = []string{"-DN=2", "-DHORIZON=6", "-DRESTARTS=0", "-DNOJOURNAL", "-DEVERY=2"}
	// restart is one slot whose process crashes and comes back on its journal.
	restart = []string{"-DN=1", "-DHORIZON=6", "-DRESTARTS=1"}
	// takeover is short enough a lease (TTL 3, margin 1, reservation 2) for a
	// crashed holder's lease to expire, another slot to hold the value and the
	// restart to find its journal's lease gone, within the horizon.
	takeover = []string{"-DN=2", "-DHORIZON=4", "-DRESTARTS=1", "-DMAXACQ=3", "-DTTL=3", "-DMARGIN=1",
		"-DRES=2", "-DDRIFT=0", "-DPAUSE=0", "-DOFF=0"}
	// clone is slot 0's journal copied, at any step, onto slot 1 (a new data
	// directory), where a process starts on it while slot 0's runs on or has
	// crashed: a short lease (TTL 3, reservation 2), one acquisition.
	clone = []string{"-DN=2", "-DHORIZON=3", "-DRESTARTS=0", "-DCLONES=1", "-DMAXACQ=1", "-DTTL=3", "-DMARGIN=1",
		"-DRES=2", "-DDRIFT=0", "-DPAUSE=0", "-DOFF=0"}
	// cloneBudget is clone with a reservation (3) beyond the journal's lead (2), as
	// in the code: the original may issue past the copied journal's mark without a
	// store write the copy can see.
	cloneBudget = []string{"-DN=2", "-DHORIZON=4", "-DRESTARTS=0", "-DCLONES=1", "-DMAXACQ=1", "-DTTL=4", "-DMARGIN=1",
		"-DRES=3", "-DDRIFT=0", "-DPAUSE=0", "-DOFF=0"}
	// revert is one slot whose journal is saved once, at any step, and restored in
	// place once its process has ended, for the next process on it.
	revert = []string{"-DN=1", "-DHORIZON=4", "-DRESTARTS=1", "-DREVERT", "-DMAXACQ=1", "-DDRIFT=0", "-DPAUSE=0"}
	// revertLong is revert with one more unit of time: long enough for the slot to
	// issue above the copy's mark and the store to record a write after it.
	revertLong = []string{"-DN=1", "-DHORIZON=5", "-DRESTARTS=1", "-DREVERT", "-DMAXACQ=1", "-DDRIFT=0", "-DPAUSE=0"}
	// cloneRestart is clone with a restart, on either slot: two processes on copies
	// of a crashed node's journal.
	cloneRestart = []string{"-DN=2", "-DHORIZON=3", "-DRESTARTS=1", "-DCLONES=1", "-DMAXACQ=1", "-DTTL=3", "-DMARGIN=1",
		"-DRES=2", "-DDRIFT=0", "-DPAUSE=0", "-DOFF=0"}
)

func with(base []string, more ...string) []string {
	return append(append([]string{}, base...), more...)
}

var leaseRuns = []run{
	// The real protocol: exhaustive, no error.
	{name: "protocol/one-holder", flags: one},
	{name: "protocol/no-journal", flags: noJournal},
	{name: "protocol/restart", flags: restart},
	{name: "protocol/restart-long-ttl", flags: with(restart, "-DRES=2")},
	{name: "protocol/two-holders", flags: two, long: true},
	{name: "protocol/restart-two-holders", flags: []string{"-DN=2", "-DHORIZON=3", "-DRESTARTS=1"}, long: true},
	{name: "protocol/two-restarts", flags: []string{"-DN=1", "-DHORIZON=5", "-DRESTARTS=2"}, long: true},
	{name: "protocol/takeover", flags: takeover, long: true},
	{name: "protocol/clone", flags: clone},
	{name: "protocol/revert", flags: revert},
	{name: "protocol/clone-budget", flags: cloneBudget, long: true},
	{name: "protocol/clone-restart", flags: cloneRestart, long: true},
	{name: "protocol/revert-long", flags: revertLong, long: true},
	// Known-bad variants: each must break the invariant named.
	{name: "bad/fence-from-reply", flags: with(one, "-DBUG_REPLY"), fails: i4},
	{name: "bad/grant-before-write", flags: with(one, "-DBUG_NORESERVE"), fails: i2},
	{name: "bad/no-plus-one", flags: with(long, "-DBUG_NOPLUS1"), fails: i1},
	{name: "bad/release-above", flags: with(long, "-DBUG_RELEASE_ABOVE"), fails: i2},
	{name: "bad/renew-without-token", flags: with(noJournal, "-DBUG_NOTOKEN"), fails: i4},
	{name: "bad/lost-write", flags: with(long, "-DBUG_LOSTWRITE"), fails: i2},
	{name: "bad/store-clock-step", flags: with(one, "-DBUG_STORESTEP"), fails: i4},
	{name: "bad/margin-too-small", flags: with(one, "-DMARGIN=1"), fails: i4},
	{name: "bad/drift-too-large", flags: with(one, "-DDRIFT=2"), fails: i4},
	{name: "bad/pause-too-long", flags: with(one, "-DPAUSE=2"), fails: i4},
	{name: "bad/resume-without-token", flags: with(takeover, "-DBUG_RESUME_NOTOKEN"), fails: i1},
	{name: "bad/past-budget", flags: with(one, "-DRES=2", "-DBUG_PAST_BUDGET"), fails: i2},
	{name: "bad/grant-before-journal", flags: with(restart, "-DBUG_JOURNAL_LATE"), fails: i1},
	// With a resume that renews the journal's token (as before Takeover): a
	// Takeover retires the token, so the late Release fails whatever the journal
	// said.
	{name: "bad/release-under-journal-token", flags: with(restart, "-DBUG_STALE_RELEASE", "-DBUG_RESUME_RENEW"), fails: i2},
	// Copies and restores of a journal (lease/resume.go).
	{name: "bad/resume-by-renew", flags: with(clone, "-DBUG_RESUME_RENEW"), fails: i4},
	{name: "bad/takeover-keeps-token", flags: with(clone, "-DBUG_KEEP_TOKEN"), fails: i4},
	{name: "bad/trust-copied-journal", flags: with(cloneBudget, "-DBUG_TRUST_COPY"), fails: i1, long: true},
	{name: "bad/trust-journal-behind-store", flags: with(revertLong, "-DBUG_NOEPOCH"), fails: i1},
	{name: "bad/epoch-one-behind", flags: with(revertLong, "-DBUG_EPOCH_SLACK"), fails: i1},
	// What the epoch cannot see: a copy restored in place whose epoch is still the
	// store's (its process stopped, or the store stopped answering, within one
	// renewal after the copy was saved).
	{name: "bad/restore-within-a-write", flags: with(revertLong, "-DREVERT_ANY"), fails: i1},
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
	{name: "protocol/two-values", flags: twoValues},
	{name: "protocol/move", flags: move},
	{name: "protocol/move-flight", flags: []string{"-DNG=2", "-DHORIZON=3"}},
	{name: "protocol/failover", flags: []string{"-DREPLICA", "-DNG=1", "-DHORIZON=8", "-DW=4", "-DFAILOVER=5"}},
	{name: "protocol/failover-flight", flags: []string{"-DREPLICA", "-DNG=2", "-DHORIZON=4"}},
	// Known-bad variants and failed assumptions: each must issue an ID twice.
	{name: "bad/shared-field", flags: with(twoValues, "-DBUG_SHARED_FIELD"), fails: dup},
	{name: "bad/no-window", flags: with(failover, "-DBUG_NOWINDOW"), fails: dup},
	{name: "bad/no-tick", flags: with(failover, "-DBUG_NOTICK"), fails: dup},
	{name: "bad/failover-within-tick", flags: with(failover, "-DFAILOVER=1"), fails: dup},
	{name: "bad/failover-within-window", flags: with(failover, "-DFAILOVER=2"), fails: dup},
	{name: "bad/gap-one-tick", flags: with(move, "-DGAP=1"), fails: dup},
	{name: "bad/too-many-strays", flags: []string{"-DNG=1", "-DHORIZON=5", "-DBT=2", "-DSTRAY=3"}, fails: dup},
}

// region.pml's invariant: no region value is issued by two regions.
const twoRegions = "(by[v]==255)||(by[v]==r)"

// region.pml's configurations: two regions, each one server that starts twice;
// with a data directory copied from region 0 to region 1 at any step.
var (
	regions       = []string{"-DRESTARTS=1"}
	regionsCopied = []string{"-DRESTARTS=1", "-DCLONES"}
)

var regionRuns = []run{
	{name: "protocol/two-regions", flags: regions},
	{name: "protocol/copied-data-directory", flags: regionsCopied},
	{name: "protocol/three-starts-copied", flags: []string{"-DRESTARTS=2", "-DCLONES"}},
	{name: "bad/no-pin-check", flags: with(regions, "-DBUG_NO_PIN_CHECK"), fails: twoRegions},
	{name: "bad/name-only", flags: with(regions, "-DBUG_NAME_ONLY"), fails: twoRegions},
	{name: "bad/trust-copied-cache", flags: with(regionsCopied, "-DBUG_TRUST_COPY"), fails: twoRegions},
	{name: "bad/cache-before-claim", flags: with(regions, "-DBUG_CACHE_EARLY"), fails: twoRegions},
	{name: "bad/trust-any-cache", flags: with(regionsCopied, "-DBUG_TRUST_ANY"), fails: twoRegions},
}

func TestRegionModel(t *testing.T) {
	verify(t, "region.pml", regionRuns)
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
			if r.long && os.Getenv(longEnv) != "1" {
				t.Skipf("a long exhaustive run (%s): set %s=1 to run it", strings.Join(r.flags, " "), longEnv)
			}
			out := check(t, src, r.flags, r.fails != "")
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
func check(t *testing.T, src string, flags []string, bad bool) string {
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
	// -O1: under load gcc -O2 takes ~22 s per variant, -O1 ~7 s, for a verifier about
	// as fast. A known-bad variant stops at its counterexample, mostly within a few
	// thousand states: -O0 compiles in less than half the time of -O1.
	opt := "-O1"
	if bad {
		opt = "-O0"
	}
	sh("gcc", opt, "-DSAFETY", "-w", "-o", "pan", "pan.c")
	return sh("./pan", "-m100000")
}
