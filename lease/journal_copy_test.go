package lease_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

// copyOpts are session options with a short renewal interval, so that an
// original beside its copy meets its retired token within a quarter second.
func copyOpts(st lease.Store, fixed *int64) lease.Options {
	return lease.Options{Store: st, Scope: "s", Layout: twoBits, Fixed: fixed, Logger: quietLog,
		Budget: time.Second, Window: 250 * time.Millisecond}
}

// next is g.Next that rides out a refusal of up to 2 s: on a loaded machine a
// renewal can come late enough for the journal's short mark to run out.
func next(g *snowflake.Generator) (flurry.ID, error) {
	end := time.Now().Add(2 * time.Second)
	for {
		id, err := g.Next(context.Background())
		if err == nil || !errors.Is(err, lease.ErrLost) || time.Now().After(end) {
			return id, err
		}
		time.Sleep(time.Millisecond)
	}
}

// cpA copies the directory from to to as cp -a does: every file a new inode.
func cpA(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
}

// take issues n IDs from g, each above the one before.
func take(t *testing.T, g *snowflake.Generator, n int) []flurry.ID {
	t.Helper()
	ids := make([]flurry.ID, 0, n)
	for len(ids) < n {
		id, err := next(g)
		if err != nil {
			t.Fatalf("ID %d: %v", len(ids), err)
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			t.Fatalf("ID %d after %d", id, ids[len(ids)-1])
		}
		ids = append(ids, id)
	}
	return ids
}

// noDuplicates fails when an ID is in more than one of sets.
func noDuplicates(t *testing.T, sets map[string][]flurry.ID) {
	t.Helper()
	seen := make(map[flurry.ID]string)
	dups := 0
	var first string
	for name, ids := range sets {
		for _, id := range ids {
			if other, ok := seen[id]; ok && other != name {
				if dups == 0 {
					first = fmt.Sprintf("ID %d issued by %s and by %s", id, other, name)
				}
				dups++
			}
			seen[id] = name
		}
	}
	if dups > 0 {
		t.Fatalf("%d duplicate IDs; the first: %s", dups, first)
	}
}

// Two processes started from copies of a crashed node's journal (cp -a of its
// data directory; the original directory is one of them) never both resume its
// lease: exactly one does; the other takes another value of the pool, or, for a
// fixed value, waits for it. Their IDs, and the crashed run's, never overlap.
func TestJournalCopiesOfCrashedNode(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		t.Run(map[bool]string{false: "pool", true: "fixed"}[fixed], func(t *testing.T) {
			st := memstore.New(nil)
			dir := t.TempDir()
			pathA := filepath.Join(dir, "a", "journal", "s.json")
			pathB := filepath.Join(dir, "b", "journal", "s.json")
			var three *int64
			if fixed {
				three = new(int64)
				*three = 3
			}
			o := copyOpts(st, three)
			j1 := openJournal(t, pathA)
			o.Journal = j1
			g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
			if err != nil {
				t.Fatal(err)
			}
			sets := map[string][]flurry.ID{"the crashed run": take(t, g1, 20000)}
			crash(t, g1, s1, j1)
			cpA(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"))

			// The copy first: with a fixed value it takes the lease over, and the
			// original directory's process must then wait.
			var gens []*snowflake.Generator
			var sessions []*lease.Session
			for _, p := range []string{pathB, pathA} {
				o.Journal = openJournal(t, p)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				// Each process's own namespace: the in-process guard against two
				// generators of one node must not be what keeps them apart.
				g, s, err := lease.NewGenerator(ctx, logical(t.Name()+p), o)
				cancel()
				if err != nil {
					if fixed && errors.Is(err, lease.ErrNoFreeValue) && len(gens) == 1 {
						continue // waits for the value: the copy holds it
					}
					t.Fatalf("start on %s: %v", p, err)
				}
				t.Cleanup(func() { s.Close(); g.Close() })
				gens, sessions = append(gens, g), append(sessions, s)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			for i, g := range gens {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]flurry.ID, 0, 20000)
					for len(ids) < 20000 {
						id, err := next(g)
						if err != nil {
							t.Errorf("process %d: %v", i, err)
							return
						}
						ids = append(ids, id)
					}
					mu.Lock()
					sets[fmt.Sprintf("process %d", i)] = ids
					mu.Unlock()
				}()
			}
			wg.Wait()
			noDuplicates(t, sets)
			resumed := 0
			for _, s := range sessions {
				if s.Status().Resumed {
					resumed++
				}
			}
			if resumed != 1 {
				var st []string
				for _, s := range sessions {
					st = append(st, fmt.Sprintf("value %d resumed %v", s.Status().Value, s.Status().Resumed))
				}
				t.Fatalf("%d of the processes on copies of one journal resumed its lease (%s); want exactly one", resumed, strings.Join(st, "; "))
			}
		})
	}
}

// A copy of a running node's journal (its data directory copied while it runs)
// takes the fixed value over: the original's next renewal fails (ErrLost) and it
// stops issuing, and the copy's first ID is above every ID the original issued,
// also those it issued after the copy took over.
func TestJournalCopyOfRunningNode(t *testing.T) {
	st := memstore.New(nil)
	dir := t.TempDir()
	three := int64(3)
	o := copyOpts(st, &three)
	j1 := openJournal(t, filepath.Join(dir, "a", "journal", "s.json"))
	o.Journal = j1
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	defer s1.Close()

	var orig []flurry.ID
	var origErr, lastRefusal error
	done := make(chan struct{})
	go func() {
		defer close(done)
		end := time.Now().Add(waitBound)
		for time.Now().Before(end) {
			for range 100 {
				id, err := g1.Next(context.Background())
				if errors.Is(err, lease.ErrLost) && s1.Status().Losses == 0 {
					// Not the loss: a renewal came late and the journal's mark ran
					// out (see next), or the session revoked the grant and is
					// about to count the loss. Ask again.
					lastRefusal = err
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					origErr = err
					return
				}
				orig = append(orig, id)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	// Copied while it runs: after it renewed, its journal written since the start.
	waitFor(t, "the original's first renewal", func() bool { return s1.Status().Renewals > 0 })
	cpA(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	o.Journal = openJournal(t, filepath.Join(dir, "b", "journal", "s.json"))
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	g2, s2, err := lease.NewGenerator(ctx, logical(t.Name()+"/copy"), o)
	if err != nil {
		t.Fatalf("start on the copy: %v", err)
	}
	defer g2.Close()
	defer s2.Close()
	copied := take(t, g2, 20000)
	<-done
	if !errors.Is(origErr, lease.ErrLost) {
		t.Fatalf("the original still issued %v after it started (last error %v); want it stopped (ErrLost) at its next renewal after the copy took over", waitBound, origErr)
	}
	if s1.Status().Losses == 0 {
		t.Fatalf("the original's session has no loss (refused with %v, earlier %v): %+v", origErr, lastRefusal, s1.Status())
	}
	noDuplicates(t, map[string][]flurry.ID{"the original": orig, "the copy": copied})
	if last := slices.Max(orig); copied[0] <= last {
		t.Fatalf("the copy's first ID %d is not above the original's last %d", copied[0], last)
	}
}

// memJournal is a Journal in memory that cannot tell a copy: what it holds is a
// journal restored in place, the same file of the same boot, as a backup tool that
// writes the file's bytes back would leave it. Only the epoch tells it is behind.
type memJournal struct {
	mu   sync.Mutex
	e    lease.JournalEntry
	fail error // Save fails with it while set
}

func (m *memJournal) Load(context.Context) (lease.JournalEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.e, nil
}

func (m *memJournal) Save(_ context.Context, e lease.JournalEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return &os.PathError{Op: "write", Path: "journal/s.json.tmp", Err: m.fail}
	}
	m.e = e
	return nil
}

func (m *memJournal) set(e lease.JournalEntry, fail error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.e, m.fail = e, fail
}

// A journal restored in place from an earlier state (a backup of the data
// directory, a reverted snapshot), after its node issued on, names the live lease
// but an old mark: the session sees from the epoch that it is behind the store and
// starts above the store's mark, so no ID is issued twice, also on a clock that
// came back with the snapshot.
func TestJournalRestoredInPlace(t *testing.T) {
	st := memstore.New(nil)
	three := int64(3)
	o := copyOpts(st, &three)
	j := &memJournal{}
	o.Journal = j
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	backup, _ := j.Load(context.Background())
	taken := time.Now()
	var ids []flurry.ID
	// Issue through several renewals, each a journal write of a new epoch.
	for end := time.Now().Add(waitBound); s1.Status().Renewals < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for two renewals: %+v", waitBound, s1.Status())
		}
		ids = append(ids, take(t, g1, 100)...)
	}
	crash(t, g1, s1, nil)
	if now, _ := j.Load(context.Background()); now.Epoch <= backup.Epoch {
		t.Fatalf("the journal's epoch went from %d to %d over several renewals", backup.Epoch, now.Epoch)
	}
	j.set(backup, nil)
	// A reverted snapshot's clock comes back behind too, about to when the
	// snapshot was taken, until it syncs.
	o.Clock = &skewed{d: -time.Since(taken)}

	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	g2, s2, err := lease.NewGenerator(ctx, logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	after := take(t, g2, 1000)
	noDuplicates(t, map[string][]flurry.ID{"before the restore": ids, "after": after})
	if last := ids[len(ids)-1]; after[0] <= last {
		t.Fatalf("the first ID on the restored journal %d is not above the last before the restore %d", after[0], last)
	}
}

// A journal saved before the host rebooted (another boot id, as a cloned virtual
// machine has) counts as copied: a fixed value is taken over above the store's
// reservation, not above the journal's mark.
func TestJournalAfterReboot(t *testing.T) {
	st := memstore.New(nil)
	three := int64(3)
	o := copyOpts(st, &three)
	o.Budget = 5 * time.Second
	path := filepath.Join(t.TempDir(), "journal", "s.json")
	j1 := openJournal(t, path)
	o.Journal = j1
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	take(t, g1, 100)
	reserved := storeMark(t, st, s1.Status().Scope, 3)
	crash(t, g1, s1, j1)

	// Another boot id, the same file (os.WriteFile keeps the inode).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	origin, _ := raw["origin"].(string)
	if !strings.HasPrefix(origin, "boot=") {
		t.Fatalf("origin %q", origin)
	}
	raw["origin"] = "boot=another-boot" + origin[strings.Index(origin, ";"):]
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	o.Journal = openJournal(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	g2, s2, err := lease.NewGenerator(ctx, logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	if st := s2.Status(); !st.Resumed || st.Above.UnixMilli() < reserved {
		t.Fatalf("after a reboot the session starts above %v (resumed %v); want the store's reservation %v", st.Above, st.Resumed, time.UnixMilli(reserved).UTC())
	}
}

// A journal that cannot be written (a full disk) stops the generator at the end
// of its journal's mark, and its refusal names the cause: it wraps ErrJournal and
// the file system's error. Once the disk takes writes again, issuing resumes.
func TestJournalFullDiskNamed(t *testing.T) {
	st := memstore.New(nil)
	o := copyOpts(st, nil)
	j := &memJournal{}
	o.Journal = j
	g, s, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	take(t, g, 10)
	e, _ := j.Load(context.Background())
	j.set(e, syscall.ENOSPC)
	var refusal error
	for end := time.Now().Add(waitBound); time.Now().Before(end) && refusal == nil; time.Sleep(time.Millisecond) {
		_, refusal = g.Next(context.Background())
	}
	if refusal == nil {
		t.Fatalf("the generator still issues %v after its journal stopped taking writes", waitBound)
	}
	if !errors.Is(refusal, lease.ErrLost) || !errors.Is(refusal, lease.ErrJournal) || !errors.Is(refusal, syscall.ENOSPC) {
		t.Fatalf("refusal %v; want it to wrap lease.ErrLost, lease.ErrJournal and ENOSPC", refusal)
	}
	if !strings.Contains(refusal.Error(), "no space left on device") {
		t.Fatalf("refusal %q does not name the full disk", refusal)
	}
	j.set(e, nil)
	for end := time.Now().Add(waitBound); ; time.Sleep(5 * time.Millisecond) {
		if _, err := g.Next(context.Background()); err == nil {
			break
		} else if time.Now().After(end) {
			t.Fatalf("%v after the journal takes writes again: %v", waitBound, err)
		}
	}
}

// A pool value's journal restored from a backup onto a new file (cp -a of the
// backup, a reverted snapshot), with the clock back about as far as the backup is
// old: the session takes another value, and starts above what the journal's value
// was last renewed for, so the node's IDs still go on above its earlier ones.
func TestJournalRestoredPoolKeepsOrder(t *testing.T) {
	st := memstore.New(nil)
	o := copyOpts(st, nil)
	j := &memJournal{}
	o.Journal = j
	g1, s1, err := lease.NewGenerator(context.Background(), logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	backup, _ := j.Load(context.Background())
	taken := time.Now()
	var ids []flurry.ID
	for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		ids = append(ids, take(t, g1, 100)...)
	}
	v1 := s1.Status().Value
	crash(t, g1, s1, nil)
	backup.Copied = true // restored onto another file: Load says so
	j.set(backup, nil)
	o.Clock = &skewed{d: -time.Since(taken)}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	g2, s2, err := lease.NewGenerator(ctx, logical(t.Name()), o)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	after := take(t, g2, 1000)
	if v2 := s2.Status().Value; v2 == v1 {
		t.Fatalf("the restored journal's session took the value %d of the crashed holder's live lease", v2)
	}
	noDuplicates(t, map[string][]flurry.ID{"before the restore": ids, "after": after})
	if last := ids[len(ids)-1]; after[0] <= last {
		t.Fatalf("the first ID after the restore %d is not above the last before it %d: the node's IDs went back", after[0], last)
	}
}
