package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
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

// TestStateFileDeleted: a directory whose segments.json is gone while its
// segments.lock records that the store wrote it (a mistaken rm, a partial
// restore) is refused by every call and by HasState, naming the file and what to
// do, instead of starting every tag from 1 again. A store that only ever read
// (the lock file made, nothing written) still starts, and a store written by an
// older flurry (an empty lock file) is marked by its next call.
func TestStateFileDeleted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newStore(t, dir)
	if _, err := s.Tags(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, "order", 3, 0, 0); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Take of an unknown tag: %v", err)
	}
	// Only reads so far: a first Create still works.
	if err := s.Create(ctx, segment.Tag{Name: "order", Step: 100}); err != nil {
		t.Fatalf("Create after reads only: %v", err)
	}
	b, err := s.Take(ctx, "order", 100, 0, 0)
	if err != nil || b.First != 1 {
		t.Fatalf("first Take: %+v, %v", b, err)
	}
	state := filepath.Join(dir, StateFile)
	refused := func(when string) {
		t.Helper()
		s := newStore(t, dir)
		for _, call := range []struct {
			name string
			run  func() error
		}{
			{"Take", func() error { _, err := s.Take(ctx, "order", 100, 0, 0); return err }},
			{"Create", func() error { return s.Create(ctx, segment.Tag{Name: "order", Step: 100}) }},
			{"Tags", func() error { _, err := s.Tags(ctx); return err }},
			{"SetStep", func() error { return s.SetStep(ctx, "order", 10) }},
			{"HasState", func() error {
				if has, err := HasState(dir); err != nil || !has {
					return err
				}
				return errors.New("it has state")
			}},
		} {
			err := call.run()
			if err == nil || !strings.Contains(err.Error(), state+" is missing") || !strings.Contains(err.Error(), LockFile) || !strings.Contains(err.Error(), "restore") {
				t.Errorf("%s: %s after segments.json was deleted: %v; want a refusal naming %s and what to do", when, call.name, err, state)
			}
		}
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused call wrote %s again (%v)", when, state, err)
		}
	}
	backup, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	refused("deleted")

	// Restored from the copy: it goes on above what it handed out.
	if err := os.WriteFile(state, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := newStore(t, dir).Take(ctx, "order", 100, 0, 0); err != nil || b.First != 101 {
		t.Fatalf("Take after the restore: %+v, %v; want from 101", b, err)
	}

	// A store an older flurry wrote has an empty lock file: the next call
	// marks it, so a deletion after that is refused too.
	if err := os.Truncate(filepath.Join(dir, LockFile), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := newStore(t, dir).Tags(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	refused("deleted after an upgrade")
}
