package lease_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flurryid/flurry/lease"
)

// A journal knows when it is read from another file than it was saved in: a copy
// (cp, cp -a, a restored backup) is another inode, and counts as copied; the same
// file, opened again, does not; an entry saved without an Origin (an older flurry)
// counts as copied.
func TestJournalCopied(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "journal", "ns.json")
	j := openJournal(t, path)
	want := lease.JournalEntry{Scope: "s", Value: 3, Token: "t", Mark: 1000, Epoch: 7}
	if err := j.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	load := func(j *lease.FileJournal) lease.JournalEntry {
		t.Helper()
		e, err := j.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Scope != want.Scope || e.Token != want.Token || e.Mark != want.Mark || e.Epoch != want.Epoch || e.Origin == "" {
			t.Fatalf("loaded %+v; want %+v with an origin", e, want)
		}
		return e
	}
	if e := load(j); e.Copied {
		t.Fatalf("the journal's own file, loaded by its writer: copied %+v", e)
	}
	j.Close()
	j2 := openJournal(t, path)
	if e := load(j2); e.Copied {
		t.Fatalf("the journal's own file, opened again: copied %+v", e)
	}
	j2.Close()

	// cp -a of the data directory: every file a new inode.
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, "data"), filepath.Join(dir, "data2")).CombinedOutput(); err != nil {
		t.Skipf("cp -a: %v %s", err, out)
	}
	if e := load(openJournal(t, filepath.Join(dir, "data2", "journal", "ns.json"))); !e.Copied {
		t.Fatalf("a copy of the journal: not copied %+v", e)
	}
	// The original is still its own.
	j = openJournal(t, path)
	if e := load(j); e.Copied {
		t.Fatalf("the original, after a copy was made: copied %+v", e)
	}
	j.Close()

	// Restored in place: the file's bytes written back over it (another inode once
	// the journal has saved since, as each save renames a new file in).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j3 := openJournal(t, path)
	if err := j3.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if e := load(j3); !e.Copied {
		t.Fatalf("an older save written back over the journal: not copied %+v", e)
	}

	// An entry without an origin.
	old := filepath.Join(dir, "old", "ns.json")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte(`{"scope":"s","value":3,"token":"t","mark":1000,"epoch":7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if e, err := openJournal(t, old).Load(ctx); err != nil || !e.Copied {
		t.Fatalf("an entry without an origin: %+v, %v; want copied", e, err)
	}
}
