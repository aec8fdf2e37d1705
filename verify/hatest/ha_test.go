//go:build flurry_full || flurry_sql || flurry_redis || flurry_etcd || flurry_zk

// The helpers of the engines' tests, built with any of their tags.

package hatest

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
	_ "github.com/flurryid/flurry/verify/enginetags" // the engines of the test's tags
	"github.com/flurryid/flurry/verify/testenv"
)

// need finds a server binary, or skips naming it (fails with FLURRY_TEST_REQUIRE=1).
func need(t *testing.T, name, pkg string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		msg := name + " not installed (Debian package " + pkg + "); the failover test starts its own servers"
		if testenv.Required() {
			t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
		}
		t.Skip(msg)
	}
	return bin
}

// proc starts a server process, logging to dir/name.log, and kills it when the
// test ends.
func proc(t *testing.T, dir, name string, bin string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	return cmd
}

// eventually runs op until it succeeds, for at most 30s, and returns how many
// attempts failed.
func eventually(t *testing.T, what string, op func(ctx context.Context) error) int {
	t.Helper()
	failed := 0
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last = op(ctx)
		cancel()
		if last == nil {
			return failed
		}
		failed++
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s kept failing for 30s: %v", what, last)
	return failed
}

// exercise holds a lease and takes segment blocks from the stores the URLs name
// (no segment store when segURL is empty), round after round, and runs fault
// halfway. The lease must never be lost, and the blocks must strictly increase,
// before, during and after the fault; every operation must succeed again after it.
func exercise(t *testing.T, leaseURL, segURL string, fault func()) {
	t.Helper()
	const rounds = 30
	open := context.Background()
	ls, err := leaseurl.Open(open, leaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	var ss segment.Store
	if segURL != "" {
		if ss, err = segmenturl.Open(open, segURL); err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
	}

	scope, tag := "fc-ha-"+rand.Text()[:8], "fc_ha_"+strings.ToLower(rand.Text()[:8])
	var l lease.Lease
	eventually(t, "acquire", func(ctx context.Context) (err error) {
		l, err = ls.Acquire(ctx, scope, 16, "hatest", 10*time.Second)
		return err
	})
	defer ls.Release(open, l, 0)
	if ss != nil {
		if err := ss.Create(open, segment.Tag{Name: tag, Step: 10}); err != nil {
			t.Fatal(err)
		}
	}
	var high int64
	failures := 0
	for r := range rounds {
		if r == rounds/2 {
			fault()
		}
		mark := int64(r + 1)
		failures += eventually(t, "renew", func(ctx context.Context) error {
			nl, err := ls.Renew(ctx, l, 10*time.Second, mark)
			if errors.Is(err, lease.ErrLost) {
				t.Fatalf("round %d: the lease was lost: %v", r, err)
			}
			if err == nil {
				if nl.Mark < mark || nl.Value != l.Value {
					t.Fatalf("round %d: renewed %+v; want value %d, mark at least %d", r, nl, l.Value, mark)
				}
				l = nl
			}
			return err
		})
		if ss == nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		failures += eventually(t, "take", func(ctx context.Context) error {
			b, err := ss.Take(ctx, tag, 10, high, 0)
			if err == nil {
				if b.First <= high || b.Last < b.First {
					t.Fatalf("round %d: block %d..%d after %d", r, b.First, b.Last, high)
				}
				high = b.Last
			}
			return err
		})
		time.Sleep(100 * time.Millisecond)
	}
	recs, err := ls.List(open, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !recs[0].Held || recs[0].Mark < rounds {
		t.Errorf("records after the run: %+v", recs)
	}
	if ss == nil {
		t.Logf("%d rounds, %d failed attempts (retried) around the fault", rounds, failures)
		return
	}
	t.Logf("%d rounds, %d failed attempts (retried) around the fault, last block ends at %d", rounds, failures, high)
}

// member is a server of a cluster a test kills members of.
type member struct {
	cmd    *exec.Cmd
	killed bool
}

func freePorts(t *testing.T, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = testenv.FreePort(t)
	}
	return out
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
