package lease_test

// Regression tests for what the SPIN model of the journal found (docs/correctness.md,
// "The model"): a Release that runs after a successor resumed its lease, a Save that
// failed after writing, and resume retries that ran the floor ahead of the clock.

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

// heldNet is a store behind a network that can hang Renew until the caller gives up,
// fail Renew as an unreachable store does, and hold a Release in flight (the store
// runs it later, when the test says).
type heldNet struct {
	lease.Store
	mu          sync.Mutex
	hangRenew   bool
	failRenews  int
	holdRelease bool
	heldL       lease.Lease
	heldMark    int64
}

var errNetDown = errors.New("store unreachable (test)")

func (n *heldNet) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	n.mu.Lock()
	hang, fail := n.hangRenew, n.failRenews > 0
	if fail {
		n.failRenews--
	}
	n.mu.Unlock()
	if hang {
		<-ctx.Done()
		return lease.Lease{}, ctx.Err()
	}
	if fail {
		return lease.Lease{}, errNetDown
	}
	return n.Store.Renew(ctx, l, ttl, mark)
}

func (n *heldNet) Release(ctx context.Context, l lease.Lease, mark int64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.holdRelease {
		n.heldL, n.heldMark = l, mark
		return context.DeadlineExceeded
	}
	return n.Store.Release(ctx, l, mark)
}

// A Release sent under the token the journal names (here tryAcquire's abandon)
// that runs after the next process resumed that token frees the value under it.
func TestStaleReleaseAfterResume(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	mem := memstore.New(clk)
	n := &heldNet{Store: mem, hangRenew: true, holdRelease: true}
	path := filepath.Join(t.TempDir(), "journal.json")
	zero := int64(0)
	lopts := func(st lease.Store, j lease.Journal) lease.Options {
		return lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &zero, Journal: j, Order: lease.OrderValue, Logger: quietLog}
	}

	// Process 1: the first Renew gets no answer before Start's deadline; the abandon's
	// Release is still in the network when the process exits.
	j1, err := lease.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _, err = lease.NewGenerator(ctx, snowflake.Options{Layout: twoBits, Namespace: "p1", Clock: clk}, lopts(n, j1))
	cancel()
	t.Logf("process 1: %v", err)
	j1.Close()

	// Process 2 on the same journal resumes the lease.
	n.mu.Lock()
	n.hangRenew, n.holdRelease = false, false
	n.mu.Unlock()
	j2, err := lease.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	g2, s2, err := lease.NewGenerator(ctx2,
		snowflake.Options{Layout: twoBits, Namespace: "p2", Clock: clk, Behind: snowflake.Logical, MaxDrift: time.Minute}, lopts(n, j2))
	if err != nil {
		t.Logf("process 2 does not resume: %v (the value stays held until process 1's lease expires)", err)
		return
	}
	defer g2.Close()
	defer s2.Close()
	t.Logf("process 2: resumed %v, above %v", s2.Status().Resumed, s2.Status().Above)
	id2, err := g2.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	// Process 1's Release arrives now.
	t.Logf("process 1's late Release(token %s, mark %d): %v", n.heldL.Token, n.heldMark, mem.Release(context.Background(), n.heldL, n.heldMark))

	// Process 3, on another machine, asks for the same value.
	g3, s3, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: "p3", Clock: clk}, lopts(mem, nil))
	if err != nil {
		t.Logf("process 3: %v (the value is held: correct)", err)
		return
	}
	defer g3.Close()
	defer s3.Close()
	parts, _ := twoBits.Decompose(id2)
	clk.Set(twoBits.TickTime(parts.Tick))
	id3, err := g3.Next(context.Background())
	t.Logf("process 2 holds value 0 (status held %v) and issued %d; process 3 acquired value 0 above %v and issued %d (%v)", s2.Status().Held, id2, s3.Status().Above, id3, err)
	if id3 == id2 {
		t.Fatalf("duplicate ID %d", id2)
	}
	if id3 < id2 {
		t.Fatalf("process 3, the later holder of value 0, issued %d below process 2's %d", id3, id2)
	}
}

// Close whose Release gets no answer keeps the token in the journal; the Release
// runs after the next process resumed it.
func TestStaleCloseReleaseAfterResume(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	mem := memstore.New(clk)
	n := &heldNet{Store: mem}
	path := filepath.Join(t.TempDir(), "journal.json")
	zero := int64(0)
	lopts := func(st lease.Store, j lease.Journal) lease.Options {
		return lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &zero, Journal: j, Order: lease.OrderValue, Logger: quietLog}
	}
	j1, _ := lease.OpenJournal(path)
	g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: "p1", Clock: clk}, lopts(n, j1))
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := g1.Next(context.Background())
	n.mu.Lock()
	n.holdRelease = true
	n.mu.Unlock()
	t.Logf("process 1 issued %d; Close: %v", id1, s1.Close())
	g1.Close()
	j1.Close()
	n.mu.Lock()
	n.holdRelease = false
	n.mu.Unlock()

	j2, _ := lease.OpenJournal(path)
	defer j2.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	g2, s2, err := lease.NewGenerator(ctx2,
		snowflake.Options{Layout: twoBits, Namespace: "p2", Clock: clk, Behind: snowflake.Logical, MaxDrift: time.Minute}, lopts(n, j2))
	if err != nil {
		t.Logf("process 2 does not resume: %v (the value stays held until process 1's lease expires)", err)
		return
	}
	defer g2.Close()
	defer s2.Close()
	id2, _ := g2.Next(context.Background())
	t.Logf("process 2: resumed %v, above %v, issued %d", s2.Status().Resumed, s2.Status().Above, id2)
	t.Logf("process 1's late Release(token %s, mark %d): %v", n.heldL.Token, n.heldMark, mem.Release(context.Background(), n.heldL, n.heldMark))
	g3, s3, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: "p3", Clock: clk}, lopts(mem, nil))
	if err != nil {
		t.Logf("process 3: %v (the value is held: correct)", err)
		return
	}
	defer g3.Close()
	defer s3.Close()
	parts, _ := twoBits.Decompose(id2)
	clk.Set(twoBits.TickTime(parts.Tick))
	id3, err := g3.Next(context.Background())
	t.Logf("process 3 acquired value 0 above %v and issued %d (%v)", s3.Status().Above, id3, err)
	if id3 <= id2 {
		t.Fatalf("process 3, the later holder of value 0, issued %d, not above process 2's %d (duplicate: %v)", id3, id2, id3 == id2)
	}
}

// A restart while the store does not answer retries the resume; each attempt
// raises the journal's mark by the journal's lead (2 renewal intervals) from the
// last attempt's mark, not from the clock: the floor runs ahead of time.
func TestResumeRetriesRunTheFloorAhead(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	mem := memstore.New(clk)
	n := &heldNet{Store: mem, hangRenew: true, holdRelease: true}
	path := filepath.Join(t.TempDir(), "journal.json")
	zero := int64(0)
	lopts := func(st lease.Store, j lease.Journal) lease.Options {
		return lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &zero, Journal: j, Order: lease.OrderValue, Logger: quietLog}
	}
	// Process 1 leaves its token in the journal (its Start timed out).
	j1, _ := lease.OpenJournal(path)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	lease.NewGenerator(ctx, snowflake.Options{Layout: twoBits, Namespace: "p1", Clock: clk}, lopts(n, j1))
	cancel()
	j1.Close()
	e0, _ := (func() (lease.JournalEntry, error) {
		j, _ := lease.OpenJournal(path)
		defer j.Close()
		return j.Load(context.Background())
	})()

	// Process 2 starts while the store is down for 40 attempts.
	n.mu.Lock()
	n.hangRenew, n.holdRelease, n.failRenews = false, false, 40
	n.mu.Unlock()
	t0 := clk.Now()
	j2, _ := lease.OpenJournal(path)
	defer j2.Close()
	g2, s2, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: "p2", Clock: clk}, lopts(n, j2))
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	st := s2.Status()
	elapsed := time.Duration(clk.Now() - t0)
	ahead := st.Above.Sub(clk.Time())
	_, nerr := g2.Next(context.Background())
	t.Logf("journal mark at start %v; after %v of retries (clock %v): resumed %v, above %v (%v ahead of the clock), journal %v; Next: %v",
		time.UnixMilli(e0.Mark).UTC(), elapsed, clk.Time(), st.Resumed, st.Above, ahead, st.Journal, nerr)
	if ahead > 5*time.Second {
		t.Fatalf("the restart starts %v ahead of its clock", ahead)
	}
}

// flakyJournal saves the entry, then reports an error once (as a Save whose
// directory fsync, or a remote journal's acknowledgement, fails after the write).
type flakyJournal struct {
	lease.Journal
	failOnce bool
}

func (f *flakyJournal) Save(ctx context.Context, e lease.JournalEntry) error {
	err := f.Journal.Save(ctx, e)
	if err == nil && f.failOnce && e.Token != "" {
		f.failOnce = false
		return errors.New("fsync directory: input/output error (test)")
	}
	return err
}

// A Save that fails after the entry was written leaves the journal naming the
// token while the session believes it does not; abandon then sends its Release.
func TestFailedSaveThenRelease(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	mem := memstore.New(clk)
	n := &heldNet{Store: mem, holdRelease: true}
	path := filepath.Join(t.TempDir(), "journal.json")
	zero := int64(0)
	lopts := func(st lease.Store, j lease.Journal) lease.Options {
		return lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &zero, Journal: j, Order: lease.OrderValue, Logger: quietLog}
	}
	j1, _ := lease.OpenJournal(path)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _, err := lease.NewGenerator(ctx, snowflake.Options{Layout: twoBits, Namespace: "p1", Clock: clk}, lopts(n, &flakyJournal{Journal: j1, failOnce: true}))
	cancel()
	t.Logf("process 1: %v; Release held: token %q", err, n.heldL.Token)
	j1.Close()
	n.mu.Lock()
	n.holdRelease = false
	n.mu.Unlock()

	j2, _ := lease.OpenJournal(path)
	defer j2.Close()
	e, _ := j2.Load(context.Background())
	t.Logf("the journal names token %q", e.Token)
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	g2, s2, err := lease.NewGenerator(ctx2,
		snowflake.Options{Layout: twoBits, Namespace: "p2", Clock: clk, Behind: snowflake.Logical, MaxDrift: time.Minute}, lopts(n, j2))
	if err != nil {
		t.Logf("process 2: %v", err)
		return
	}
	defer g2.Close()
	defer s2.Close()
	id2, _ := g2.Next(context.Background())
	t.Logf("process 2: resumed %v, issued %d; process 1's late Release: %v", s2.Status().Resumed, id2, mem.Release(context.Background(), n.heldL, n.heldMark))
	g3, s3, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: "p3", Clock: clk}, lopts(mem, nil))
	if err != nil {
		t.Logf("process 3: %v (correct)", err)
		return
	}
	defer g3.Close()
	defer s3.Close()
	parts, _ := twoBits.Decompose(id2)
	clk.Set(twoBits.TickTime(parts.Tick))
	id3, _ := g3.Next(context.Background())
	if id3 <= id2 {
		t.Fatalf("process 3 issued %d, not above process 2's %d (duplicate: %v)", id3, id2, id3 == id2)
	}
}

// downStore fails Renew, as an unreachable store does, while down > 0.
type downStore struct {
	lease.Store
	down int
}

func (d *downStore) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if d.down > 0 {
		d.down--
		return lease.Lease{}, context.DeadlineExceeded
	}
	return d.Store.Renew(ctx, l, ttl, mark)
}

// A restart that retries its resume while the store does not answer starts above
// the journal's mark, not further ahead on every retry.
func TestResumeRetriesKeepTheFloor(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	mem := memstore.New(clk)
	path := filepath.Join(t.TempDir(), "journal.json")
	zero := int64(0)
	o := lease.Options{Store: mem, Scope: "s", Layout: twoBits, Fixed: &zero, Logger: quietLog}
	j1 := openJournal(t, path)
	o.Journal = j1
	g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name(), Clock: clk}, o)
	if err != nil {
		t.Fatal(err)
	}
	crash(t, g1, s1, j1)
	jr, err := lease.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := jr.Load(context.Background())
	jr.Close()

	d := &downStore{Store: mem, down: 40}
	o.Store = d
	j2 := openJournal(t, path)
	o.Journal = j2
	g2, s2, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name() + "/2", Clock: clk}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	st := s2.Status()
	ahead := st.Above.Sub(clk.Time())
	_, nerr := g2.Next(context.Background())
	t.Logf("journal mark %v; 40 failed resumes later the clock reads %v: resumed %v, above %v (%v ahead of the clock), journal %v; Next: %v",
		time.UnixMilli(e.Mark).UTC(), clk.Time(), st.Resumed, st.Above, ahead, st.Journal, nerr)
	if !st.Resumed {
		t.Fatal("not resumed")
	}
	if st.Above.After(time.UnixMilli(e.Mark)) {
		t.Fatalf("the restart starts above %v, %v past the journal's mark %v", st.Above, st.Above.Sub(time.UnixMilli(e.Mark)), time.UnixMilli(e.Mark).UTC())
	}
}
