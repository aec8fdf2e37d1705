package filestore

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
)

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	leasetest.Run(t, func(t *testing.T) lease.Store {
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	for _, good := range []string{"file://" + dir, "file://localhost" + dir} {
		o, err := ParseURL(good)
		if err != nil || o.Dir != dir {
			t.Fatalf("ParseURL(%q) = %+v, %v", good, o, err)
		}
		s, err := Open(context.Background(), o)
		if err != nil || s.Dir() != dir {
			t.Errorf("Open(%+v) = %v, %v", o, s, err)
		}
	}
	for _, bad := range []string{"redis://x", "file://otherhost/x", "file://" + dir + "?ttl=1", "::"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}

// FuzzDamagedFile: whatever bytes a scope's file holds, the store never panics; it
// either reads them or refuses with an error, and never hands out a held value twice.
func FuzzDamagedFile(f *testing.F) {
	f.Add([]byte(`{"scope":"s","values":{"0":{"owner":"a","token":"t","expires_ms":99999999999999,"mark":5}}}`))
	f.Add([]byte(`{"values":{"x":{}}}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"values":null}`))
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := s.paths("s")
		if err := os.WriteFile(data, content, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.List(ctx, "s"); err != nil {
			return
		}
		a, errA := s.Acquire(ctx, "s", 2, "a", time.Second)
		b, errB := s.Acquire(ctx, "s", 2, "b", time.Second)
		if errA == nil && errB == nil && a.Value == b.Value {
			t.Fatalf("value %d handed out twice", a.Value)
		}
	})
}

// TestScopeFileDeleted: a scope whose file is gone while its lock file records
// that the store wrote it is refused, naming the file and what to do, instead
// of handing out its values with no high-water mark (a restart would then trust
// the clock alone). A scope that was only listed (the lock file made, nothing
// written) is still acquired, and one an older flurry wrote (an empty lock
// file) is marked by its next call.
func TestScopeFileDeleted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := s.List(ctx, "orders"); err != nil || len(recs) != 0 {
		t.Fatalf("List of a new scope: %v, %v", recs, err)
	}
	l, err := s.Acquire(ctx, "orders", 4, "a", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after a listing only: %v", err)
	}
	if err := s.Release(ctx, l, 123456); err != nil {
		t.Fatal(err)
	}
	data, lock := s.paths("orders")
	refused := func(when string) {
		t.Helper()
		for _, call := range []struct {
			name string
			run  func() error
		}{
			{"Acquire", func() error { _, err := s.Acquire(ctx, "orders", 4, "b", time.Minute); return err }},
			{"AcquireValue", func() error { _, err := s.AcquireValue(ctx, "orders", 0, "b", time.Minute); return err }},
			{"List", func() error { _, err := s.List(ctx, "orders"); return err }},
		} {
			err := call.run()
			if err == nil || !strings.Contains(err.Error(), data+" is missing") || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), "restore") {
				t.Errorf("%s: %s after the scope file was deleted: %v; want a refusal naming %s and what to do", when, call.name, err, data)
			}
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused call wrote %s again (%v)", when, data, err)
		}
	}
	backup, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	refused("deleted")

	// Restored: the mark is back.
	if err := os.WriteFile(data, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := s.AcquireValue(ctx, "orders", 0, "b", time.Minute); err != nil || l.Mark != 123456 {
		t.Fatalf("AcquireValue after the restore: %+v, %v; want mark 123456", l, err)
	}
	// An older flurry's empty lock file: the next call marks it.
	if err := os.Truncate(lock, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	refused("deleted after an upgrade")
}
