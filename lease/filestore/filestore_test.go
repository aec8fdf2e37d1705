package filestore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasetest"
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
