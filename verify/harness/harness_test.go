package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/verify/netns"
	"github.com/flurryid/flurry/verify/testenv"
)

// short is the go test scenario: etcd hanging for 5 to 8 s (shorter than the
// outage budget: a snowflake namespace must ride through it), a node killed and
// restarted, the etcd leader killed, the ZooKeeper leader killed, a node cut off
// the stores, a node restarted 30 s behind, a rolling restart (the seed picks nodes
// and durations; the order is kept so the run's length is known). The takeover of a paused node's value waits
// out a lease (69 s with flurry's defaults) and the long store outages take minutes:
// they are in the full schedule (cmd/faultrun), not here.
var short = []string{"hangs-etcd", "sigkill-node", "kill-etcd-leader", "kill-zk-leader", "partition-stores", "skew-behind", "rolling-restart"}

// TestShortScenario runs the short scenario on a fresh cluster and checks every ID
// the clients received: no duplicate, each node's IDs increasing, every ID in range.
// A failure prints the seed and the command that replays it.
func TestShortScenario(t *testing.T) {
	ctx, seed, replay, flurry, client := startScenarioTest(t, "TestShortScenario", "about two minutes", 8*time.Minute)
	// flurry's lease defaults, as users run it.
	sc, err := Plan("short", seed, LeaseTTL(0, 0), 3*time.Second, true, short...)
	if err != nil {
		t.Fatal(err)
	}
	sc.Load = Load{Workers: 2, Count: 1000, Timeout: 2 * time.Second, MaxRequests: 100_000, Rate: 100}
	var log bytes.Buffer
	c, err := Start(ctx, Options{Flurry: flurry, Client: client, Log: &log, KeepDir: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := netns.List(context.Background(), "fh"); len(left) != 0 {
			t.Errorf("namespaces left after Close: %v", left)
		}
		if !t.Failed() {
			os.RemoveAll(c.Dir)
		} else {
			t.Logf("logs kept in %s", c.Dir)
		}
	}()
	out, err := Run(ctx, c, sc)
	t.Logf("harness log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteReport(&md, sc, out, ReportInfo{Command: replay, RedisURL: c.RedisNodeURL()}); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", md.String())
	checkOutcome(t, out)
	// The run must have exercised the system: IDs from every namespace and node.
	for _, ns := range out.Result.Namespaces {
		if ns.IDs == 0 {
			t.Errorf("namespace %s: no ID received", ns.Name)
		}
	}
	if len(out.Windows) != len(short) {
		t.Errorf("%d fault windows, want %d", len(out.Windows), len(short))
	}
	// Both workloads ran, and every restart was timed for every namespace: the
	// SIGKILL, the skewed restart and its return, three rolling ones.
	for _, ns := range allNamespaces() {
		if c := out.Calls[ns]; c == nil || c.Answered == 0 {
			t.Errorf("namespace %s: no Go client call answered", ns)
		}
	}
	if want := 6 * len(allNamespaces()); len(out.Restarts) != want {
		t.Errorf("%d restart timings, want %d", len(out.Restarts), want)
	}

	// Self-test on the same cluster: a process issuing with a node's value and no
	// lease must show up as duplicates, or the harness could not see any.
	// The clients go as fast as the nodes answer, so that n1 is asked often while
	// the rogue runs.
	self := Scenario{Name: "self-test", Seed: seed, Lead: time.Second, Tail: time.Second, Gap: time.Second,
		Load:   Load{Workers: 2, Count: 1000, Timeout: 2 * time.Second, MaxRequests: 50_000, Clients: -1},
		Faults: []Fault{{Name: "rogue process on n1's etcd value", Kind: "rogue", For: 4 * time.Second, Action: RogueNode(0)}}}
	out2, err := Run(ctx, c, self)
	if err != nil {
		t.Fatal(err)
	}
	if d := out2.Result.Totals.Duplicates; d == 0 {
		t.Errorf("self-test: a rogue process with n1's node value gave no duplicate (%s)", out2.Result.Summary())
	} else {
		t.Logf("self-test: the rogue process gave %d duplicates, as it must", d)
	}
}

// startScenarioTest begins the scenario test named test, which takes about takes:
// skipped under -short, then bounded by within (the returned context), skipped
// (or failed) when the machine cannot run the harness; it returns the seed and
// replay command (scenarioSeed) and the binaries the systems run.
func startScenarioTest(t *testing.T, test, takes string, within time.Duration) (ctx context.Context, seed uint64, replay, flurry, client string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: the scenario takes %s, as root; run: go test -tags flurry_full -run %s ./verify/harness/", takes, test)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	requireOrSkip(t, ctx)
	seed, replay = scenarioSeed(t, test)
	flurry, client = buildBinaries(t, t.TempDir())
	return ctx, seed, replay, flurry, client
}

// scenarioSeed is the seed of the scenario test named test (FLURRY_HARNESS_SEED,
// else the clock) and the command that replays the test with it; it logs both,
// and both again when the test fails.
func scenarioSeed(t *testing.T, test string) (seed uint64, replay string) {
	t.Helper()
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("FLURRY_HARNESS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FLURRY_HARNESS_SEED=%q is not a number", s)
		}
		seed = v
	}
	replay = "FLURRY_HARNESS_SEED=" + strconv.FormatUint(seed, 10) + " go test -tags flurry_full -count=1 -run " + test + " ./verify/harness/"
	t.Logf("seed %d; replay: %s", seed, replay)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d; replay with:\n  %s", seed, replay)
		}
	})
	return seed, replay
}

// checkOutcome fails the test for each fault the harness could not apply, each
// problem the run found and its anomalies (each listed with its evidence).
func checkOutcome(t *testing.T, out *Outcome) {
	t.Helper()
	for _, fr := range out.Faults {
		if fr.Err != nil {
			t.Errorf("fault %q: %v", fr.Fault.Name, fr.Err)
		}
	}
	for _, pr := range out.Problems {
		t.Error(pr)
	}
	if tot := out.Result.Totals; !out.Result.OK() {
		t.Errorf("anomalies: %d duplicates, %d order violations, %d out of range:\n\t%s", tot.Duplicates, tot.OrderViolations, tot.OutOfRange,
			strings.Join(AnomalyLines(out.Result, out.Faults, 5*time.Second), "\n\t"))
	}
}

// requireOrSkip skips (or fails under FLURRY_TEST_REQUIRE=1) when the machine cannot
// run the harness.
func requireOrSkip(t *testing.T, ctx context.Context) {
	t.Helper()
	err := netns.Check(ctx)
	if err == nil {
		err = Tools()
	}
	if err != nil {
		if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
			t.Fatalf("FLURRY_TEST_REQUIRE=1 and the fault harness cannot run: %v", err)
		}
		t.Skipf("skipping the fault harness: %v", err)
	}
}

func buildBinaries(t *testing.T, dir string) (flurry, client string) {
	t.Helper()
	// The harness runs flurry on etcd, Redis and PostgreSQL: a full build.
	testenv.NeedFull(t)
	flurry, client = filepath.Join(dir, "flurry"), filepath.Join(dir, "fhclient")
	// The nodes run the binaries from dir (as another user): copy the ones built once.
	if err := copyFile(flurry, testenv.BuildFlurry(t)); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(client, testenv.Build(t, "github.com/flurryid/flurry/verify/harness/cmd/fhclient", buildtags.Tags())); err != nil {
		t.Fatal(err)
	}
	return flurry, client
}

func copyFile(dst, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}
