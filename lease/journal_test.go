package lease_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

var errCrash = errors.New("crashed (test)")

// crash ends a session as a killed process would: its renewals stop and its
// generator is gone, but nothing is released, in the store or in the journal.
func crash(t *testing.T, g *snowflake.Generator, s *lease.Session, j *lease.FileJournal) {
	t.Helper()
	lease.Crash(s, errCrash)
	g.Close()
	if j != nil {
		j.Close() // the kernel drops a dead process's locks
	}
}

func openJournal(t *testing.T, path string) *lease.FileJournal {
	t.Helper()
	j, err := lease.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// issue takes n IDs from g and returns the largest.
func issue(t *testing.T, g *snowflake.Generator, n int) flurry.ID {
	t.Helper()
	var last flurry.ID
	for i := 0; i < n; i++ {
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatalf("ID %d: %v", i, err)
		}
		if id <= last {
			t.Fatalf("ID %d not above %d", id, last)
		}
		last = id
	}
	return last
}

// logical is what a restart on a journal wants: a clock behind the journal's mark
// (its lead of two renewal intervals, after a crash) issues above it at once.
func logical(ns string) snowflake.Options {
	return snowflake.Options{Layout: twoBits, Namespace: ns, Behind: snowflake.Logical, MaxDrift: time.Minute}
}

var twoBits, _ = layout.Parse("time:41:1ms:2020-01-01T00:00:00Z,worker:2,seq:12")

func TestBudgetAndTTL(t *testing.T) {
	for _, c := range []struct {
		budget, ttl, window time.Duration
		wantBudget, wantTTL time.Duration
		bad                 string
	}{
		{wantBudget: time.Minute, wantTTL: 69 * time.Second},
		{budget: 10 * time.Second, wantBudget: 10 * time.Second, wantTTL: 14 * time.Second},
		{budget: time.Second, window: 100 * time.Millisecond, wantBudget: time.Second, wantTTL: 2 * time.Second},
		{ttl: 10 * time.Second, wantBudget: 6950 * time.Millisecond, wantTTL: 10 * time.Second},
		{ttl: time.Second, window: 400 * time.Millisecond, wantBudget: 516 * time.Millisecond, wantTTL: time.Second},
		{budget: time.Minute, ttl: 10 * time.Second, bad: "needs a ttl of at least 1m9s"},
		{budget: 50 * time.Millisecond, bad: "outage budget 50ms must be from 100ms to 12h"},
		{budget: 13 * time.Hour, bad: "must be from 100ms to 12h"},
	} {
		g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
			lease.Options{Store: memstore.New(nil), Layout: twoBits, Budget: c.budget, TTL: c.ttl, Window: c.window, Logger: quietLog})
		if c.bad != "" {
			if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("budget %v ttl %v: %v; want lease.ErrBadConfig with %q", c.budget, c.ttl, err, c.bad)
			}
			continue
		}
		if err != nil {
			t.Fatalf("budget %v ttl %v: %v", c.budget, c.ttl, err)
		}
		s.Close()
		g.Close()
		if st := s.Status(); st.Budget != c.wantBudget || st.TTL != c.wantTTL {
			t.Errorf("budget %v ttl %v window %v: budget %v ttl %v; want %v and %v", c.budget, c.ttl, c.window, st.Budget, st.TTL, c.wantBudget, c.wantTTL)
		}
		// The fence must cover the budget and one interval: the promise the TTL is
		// derived for.
		if fence, every := lease.Fence(s); time.Duration(fence) < c.wantBudget+time.Duration(every) {
			t.Errorf("budget %v ttl %v: fence %v is shorter than budget %v + interval %v", c.budget, c.ttl, time.Duration(fence), c.wantBudget, time.Duration(every))
		}
	}
}

// A process that crashed with its value leased, and restarts on the same journal,
// resumes its lease at once (no wait for the TTL, not even with a fixed value that
// only it may hold) and issues above everything the crashed run issued.
func TestJournalResumesAfterCrash(t *testing.T) {
	st := memstore.New(nil)
	path := filepath.Join(t.TempDir(), "j", "default.json")
	three := int64(3)
	o := lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &three, Logger: quietLog}

	j1 := openJournal(t, path)
	o.Journal = j1
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	max1 := issue(t, g1, 20000)
	crash(t, g1, s1, j1)

	// Without the journal the value is held by the crashed run's lease for the TTL.
	o.Journal = nil
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _, err = lease.NewGenerator(ctx, logical(t.Name()), o)
	cancel()
	if !errors.Is(err, lease.ErrNoFreeValue) {
		t.Fatalf("without the journal: %v; want lease.ErrNoFreeValue (the crashed run's lease is live)", err)
	}

	j2 := openJournal(t, path)
	o.Journal = j2
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g2, s2, err := lease.NewGenerator(ctx, logical(t.Name()), o)
	if err != nil {
		t.Fatalf("restart on the journal: %v", err)
	}
	defer g2.Close()
	defer s2.Close()
	if st := s2.Status(); !st.Resumed || st.Value != 3 {
		t.Fatalf("status %+v; want the journal's lease resumed", st)
	}
	if id := issue(t, g2, 1); id <= max1 {
		t.Fatalf("first ID after the restart %d is not above the crashed run's last %d", id, max1)
	}
	// The store's mark is the crashed run's whole reservation, a minute ahead; the
	// restart starts above the journal's, a few seconds at most.
	if above := s2.Status().Above; above.After(time.Now().Add(10 * time.Second)) {
		t.Errorf("the restart starts above %v: the store's reservation, not the journal's mark", above)
	}
}

// A restart after a crash, on a clock 30 s behind the crashed run's, continues
// above the crashed run's IDs whatever value it gets: with Behind Logical at once;
// with Fail it refuses with the gap.
func TestJournalOrdersRestartOnClockBehind(t *testing.T) {
	for _, behind := range []snowflake.BehindPolicy{snowflake.Logical, snowflake.Fail} {
		t.Run(behind.String(), func(t *testing.T) {
			st := memstore.New(nil)
			path := filepath.Join(t.TempDir(), "default.json")
			j1 := openJournal(t, path)
			g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
				lease.Options{Store: st, Scope: "s", Layout: twoBits, Journal: j1, Logger: quietLog})
			if err != nil {
				t.Fatal(err)
			}
			max1 := issue(t, g1, 5000)
			crash(t, g1, s1, j1)
			// The crashed run's lease is live, so the journal's lease is resumed; make
			// this restart take another value, as one on another journal entry would:
			// the journal's token is gone, its mark is not.
			e, _ := j1.Load(context.Background())
			e.Token = ""
			j2 := openJournal(t, path)
			if err := j2.Save(context.Background(), e); err != nil {
				t.Fatal(err)
			}
			behindClk := &skewed{d: -30 * time.Second}
			gopts := snowflake.Options{Layout: twoBits, Namespace: t.Name(), Clock: behindClk, Behind: behind}
			if behind == snowflake.Logical {
				gopts.MaxDrift = time.Minute
			}
			g2, s2, err := lease.NewGenerator(context.Background(), gopts,
				lease.Options{Store: st, Scope: "s", Layout: twoBits, Journal: j2, Logger: quietLog, Order: lease.OrderValue})
			if err != nil {
				t.Fatal(err)
			}
			defer g2.Close()
			defer s2.Close()
			if s2.Status().Value == s1.Status().Value {
				t.Fatal("the restart got the crashed run's value; this test needs another")
			}
			id, err := g2.Next(context.Background())
			if behind == snowflake.Fail {
				if !errors.Is(err, snowflake.ErrClockBehind) {
					t.Fatalf("Fail on a clock 30 s behind: %d, %v; want ErrClockBehind", id, err)
				}
				return
			}
			if err != nil || id <= max1 {
				t.Fatalf("Logical: %d, %v; want an ID above the crashed run's %d", id, err, max1)
			}
		})
	}
}

// skewed is the system clock shifted by d.
type skewed struct{ d time.Duration }

func (c *skewed) Now() int64 { return time.Now().UnixNano() + int64(c.d) }
func (c *skewed) SleepUntil(ctx context.Context, t int64) error {
	return clock.NewSystem().SleepUntil(ctx, t-int64(c.d))
}

// stepped is the system clock plus an offset that a test moves forward: a store's
// clock that jumps past a lease's expiry instead of waiting for it.
type stepped struct{ by atomic.Int64 }

func (c *stepped) Now() int64 { return time.Now().UnixNano() + c.by.Load() }
func (c *stepped) SleepUntil(ctx context.Context, t int64) error {
	return clock.NewSystem().SleepUntil(ctx, t-c.by.Load())
}

// When the crashed run's lease expired and another holder used the value since,
// the journal's token is refused and the restart acquires as usual, above that
// holder's IDs.
func TestJournalLeaseGone(t *testing.T) {
	// The store's leases expire by a clock of their own, which the test moves past
	// the TTL instead of waiting it out.
	storeClock := &stepped{}
	st := memstore.New(storeClock)
	path := filepath.Join(t.TempDir(), "default.json")
	three := int64(3)
	o := lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: &three, Logger: quietLog, TTL: time.Second}
	j1 := openJournal(t, path)
	o.Journal = j1
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	issue(t, g1, 100)
	crash(t, g1, s1, j1)
	storeClock.by.Add(int64(1100 * time.Millisecond)) // the lease expires in the store

	o.Journal = nil
	g3, s3, err := lease.NewGenerator(context.Background(), logical(t.Name()+"/other"), o)
	if err != nil {
		t.Fatal(err)
	}
	max3 := issue(t, g3, 5000)
	s3.Close()
	g3.Close()

	j2 := openJournal(t, path)
	o.Journal = j2
	g2, s2, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	if s2.Status().Resumed {
		t.Fatal("resumed a lease that had expired and been taken")
	}
	if id := issue(t, g2, 1); id <= max3 {
		t.Fatalf("ID %d not above the other holder's %d", id, max3)
	}
}

func TestJournalCleanStopAndMisuse(t *testing.T) {
	st := memstore.New(nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "default.json")
	j1 := openJournal(t, path)
	if _, err := lease.OpenJournal(path); !errors.Is(err, lease.ErrJournalInUse) {
		t.Fatalf("a second open of one journal: %v; want lease.ErrJournalInUse", err)
	}
	g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
		lease.Options{Store: st, Scope: "s", Layout: twoBits, Journal: j1, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	max1 := issue(t, g1, 100)
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	g1.Close()
	e, err := j1.Load(context.Background())
	if err != nil || e.Token != "" || e.Mark < twoBits.TimeOf(max1).UnixMilli() || e.Mark > time.Now().Add(time.Second).UnixMilli() {
		t.Fatalf("journal after a clean stop: %+v, %v; want no token and the mark of what was issued (%v)", e, err, twoBits.TimeOf(max1))
	}
	j1.Close()

	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	j2 := openJournal(t, path)
	_, _, err = lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
		lease.Options{Store: st, Scope: "s", Layout: twoBits, Journal: j2, Logger: quietLog})
	if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged journal: %v; want lease.ErrBadConfig naming %s", err, path)
	}
}

// flaky fails every store call while down is set, as a store that does not answer.
type flaky struct {
	lease.Store
	down atomic.Bool
}

var errUnreachable = errors.New("store unreachable (test)")

func (f *flaky) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if f.down.Load() {
		return l, errUnreachable
	}
	return f.Store.Renew(ctx, l, ttl, mark)
}

// Through a store outage shorter than the budget the generator issues without a
// refusal, also with a journal whose writes go on; past the budget it stops with
// an error that names the budget, and it resumes when the store answers.
func TestOutageWithinBudget(t *testing.T) {
	st := &flaky{Store: memstore.New(nil)}
	j := openJournal(t, filepath.Join(t.TempDir(), "default.json"))
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
		lease.Options{Store: st, Scope: "s", Layout: twoBits, Journal: j, Logger: quietLog, Budget: 3 * time.Second, Window: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	st.down.Store(true)
	// Half the budget and three windows: the first reservation ends after one
	// window, so the journal's writes must carry the rest. A journal write (an
	// fsync) that stalls for most of a window on a loaded disk would refuse, which
	// with a 100 ms window it once did.
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatalf("%v into an outage of the store, inside a 3 s budget: %v", time.Until(end), err)
		}
	}
	if jm := s.Status().Journal; !jm.After(time.Now()) {
		t.Errorf("the journal's mark %v did not move ahead during the outage", jm)
	}
	var refused error
	for end := time.Now().Add(10 * time.Second); refused == nil && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		_, refused = g.Next(context.Background())
	}
	if !errors.Is(refused, lease.ErrLost) || !strings.Contains(refused.Error(), "outage budget") {
		t.Fatalf("past the budget: %v; want lease.ErrLost naming the outage budget", refused)
	}
	st.down.Store(false)
	var err2 error = refused
	for end := time.Now().Add(10 * time.Second); err2 != nil && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		_, err2 = g.Next(context.Background())
	}
	if err2 != nil {
		t.Fatalf("after the store came back: %v", err2)
	}
}

// NewGenerator refuses a layout or a clock given twice and differently, instead of
// silently taking the generator's.
func TestNewGeneratorConflicts(t *testing.T) {
	other, _ := layout.Parse("leaf")
	_, _, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name()},
		lease.Options{Store: memstore.New(nil), Layout: other, Logger: quietLog})
	if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), "differ") {
		t.Errorf("two layouts: %v; want ErrBadConfig", err)
	}
	_, _, err = lease.NewGenerator(context.Background(), snowflake.Options{Layout: twoBits, Namespace: t.Name(), Clock: clock.NewSystem()},
		lease.Options{Store: memstore.New(nil), Clock: clock.NewSystem(), Logger: quietLog})
	if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), "clock") {
		t.Errorf("two clocks: %v; want ErrBadConfig", err)
	}
	// One of each, in either struct, is fine.
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Namespace: t.Name()},
		lease.Options{Store: memstore.New(nil), Layout: twoBits, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	if got := g.Layout().String(); got != twoBits.String() {
		t.Errorf("the generator's layout is %s, not the session's %s", got, twoBits)
	}
}
