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
	if testing.Short() {
		t.Skip("-short: the fault harness scenario takes about two minutes, as root; run: go test -tags flurry_full ./verify/harness/")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	requireOrSkip(t, ctx)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLURRY_HARNESS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FLURRY_HARNESS_SEED=%q is not a number", s)
		}
		seed = v
	}
	replay := "FLURRY_HARNESS_SEED=" + strconv.FormatUint(seed, 10) + " go test -tags flurry_full -count=1 -run TestShortScenario ./verify/harness/"
	t.Logf("seed %d; replay: %s", seed, replay)
	defer func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d; replay with:\n  %s", seed, replay)
		}
	}()

	bin := t.TempDir()
	flurry, client := buildBinaries(t, bin)
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
	for _, fr := range out.Faults {
		if fr.Err != nil {
			t.Errorf("fault %q: %v", fr.Fault.Name, fr.Err)
		}
	}
	for _, pr := range out.Problems {
		t.Error(pr)
	}
	tot := out.Result.Totals
	if !out.Result.OK() {
		t.Errorf("anomalies: %d duplicates, %d order violations, %d out of range:\n\t%s", tot.Duplicates, tot.OrderViolations, tot.OutOfRange,
			strings.Join(AnomalyLines(out.Result, out.Faults, 5*time.Second), "\n\t"))
	}
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
