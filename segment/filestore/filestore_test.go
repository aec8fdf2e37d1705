package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenttest"
)

func newStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformance runs the suite with a new Store per caller on one directory, so
// that its racing takers are separate Stores sharing the file through the lock, as
// processes do.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	segmenttest.Run(t, func(t *testing.T) segment.Store { return newStore(t, dir) })
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	for _, good := range []string{"file://" + dir, "file://localhost" + dir} {
		s, err := openURL(good)
		if err != nil || s.Dir() != dir {
			t.Errorf("Open(%q) = %v, %v", good, s, err)
		}
	}
	for _, bad := range []string{"sqlite:///x.db", "file://otherhost/x", "file://" + dir + "?step=1", "file://", "::"} {
		if _, err := openURL(bad); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
}

// openURL is ParseURL then Open, as segmenturl does.
func openURL(rawURL string) (*Store, error) {
	o, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return Open(context.Background(), o)
}

func TestHasState(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "segments")
	if has, err := HasState(dir); err != nil || has {
		t.Fatalf("HasState of a missing directory: %v, %v", has, err)
	}
	s := newStore(t, dir)
	if _, err := s.Tags(ctx); err != nil {
		t.Fatal(err)
	}
	if has, err := HasState(dir); err != nil || has {
		t.Fatalf("HasState after a listing only: %v, %v; want false", has, err)
	}
	if err := s.Create(ctx, segment.Tag{Name: "a", Step: 10}); err != nil {
		t.Fatal(err)
	}
	if has, err := HasState(dir); err != nil || !has {
		t.Fatalf("HasState after Create: %v, %v; want true", has, err)
	}
}

// TestSurvivesReopen: what a store handed out stays handed out for a new Store on
// the same directory (a restarted process).
func TestSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newStore(t, dir)
	if err := s.Create(ctx, segment.Tag{Name: "order", Step: 100}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Take(ctx, "order", 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, "order", segment.Block{First: 51, Last: 100}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Take(ctx, "order", 1, 0, 0); err == nil {
		t.Fatal("Take after Close succeeded")
	}
	s2 := newStore(t, dir)
	got, err := s2.Take(ctx, "order", 100, 0, 0)
	if err != nil || !got.Returned || got.First != 51 || got.Last != 100 {
		t.Fatalf("first Take after reopening: %+v, %v; want the returned 51..100", got, err)
	}
	got, err = s2.Take(ctx, "order", 100, 0, 0)
	if err != nil || got.First != b.Last+1 {
		t.Fatalf("fresh Take after reopening: %+v, %v; want from %d", got, err, b.Last+1)
	}
}

func TestReturnRefusals(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, t.TempDir())
	if err := s.Create(ctx, segment.Tag{Name: "t", Step: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, "t", 100, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, "t", segment.Block{First: 90, Last: 120}); err == nil {
		t.Error("Return above the high-water mark accepted")
	}
	if err := s.Return(ctx, "t", segment.Block{First: 10, Last: 20}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []segment.Block{{First: 10, Last: 20}, {First: 5, Last: 10}, {First: 20, Last: 30}, {First: 1, Last: 50}} {
		if err := s.Return(ctx, "t", b); err == nil {
			t.Errorf("Return of %d..%d over the returned 10..20 accepted", b.First, b.Last)
		}
	}
}

// FuzzDamagedFile: whatever bytes the state file holds, the store never panics; it
// either refuses the file or serves blocks that do not overlap.
func FuzzDamagedFile(f *testing.F) {
	f.Add([]byte(`{"format":1,"tags":{"t":{"max":5,"step":10,"returned":[{"first":1,"last":3}]}}}`))
	f.Add([]byte(`{"format":1,"tags":{"t":{"max":5,"step":10,"returned":[{"first":1,"last":9}]}}}`))
	f.Add([]byte(`{"format":1,"tags":{"t":null}}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		s := newStore(t, dir)
		if err := os.WriteFile(filepath.Join(dir, StateFile), content, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var blocks []segment.Block
		for i := 0; i < 4; i++ {
			b, err := s.Take(ctx, "t", 3, 0, 0)
			if err != nil {
				return
			}
			for _, o := range blocks {
				if b.First <= o.Last && o.First <= b.Last {
					t.Fatalf("blocks %+v and %+v overlap", o, b)
				}
			}
			blocks = append(blocks, b)
		}
	})
}

func TestUnknownAndExists(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, t.TempDir())
	if _, err := s.Take(ctx, "nope", 1, 0, 0); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Take of an unknown tag on an empty store: %v", err)
	}
	if err := s.Create(ctx, segment.Tag{Name: "x", Step: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, segment.Tag{Name: "x", Step: 1}); !errors.Is(err, segment.ErrTagExists) {
		t.Fatalf("second Create: %v", err)
	}
}
