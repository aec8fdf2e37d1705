// The tests are in an external package: they import the store packages of their
// build tags (verify/enginetags), and those import segmenturl.
package segmenturl_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
	_ "github.com/flurryid/flurry/verify/enginetags"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestFileStore: the file store is in every build, through file:// URLs.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "segs")
	s, err := segmenturl.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(ctx, segment.Tag{Name: "order", Step: 10}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Take(ctx, "order", 10, 0, 0)
	if err != nil || b.First != 1 || b.Last != 10 {
		t.Fatalf("Take: %+v, %v", b, err)
	}
	if _, err := segmenturl.OpenExisting(ctx, "file://"+dir); err != nil {
		t.Fatal(err)
	}
}

// TestOpenExistingCreatesNoTables: OpenExisting of a SQL database without
// flurry's tables fails and leaves none behind, while Open creates them.
func TestOpenExistingCreatesNoTables(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	ctx := context.Background()
	u := "sqlite://" + filepath.Join(t.TempDir(), "s.db")
	list := func() error {
		s, err := segmenturl.OpenExisting(ctx, u)
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Tags(ctx)
		return err
	}
	if list() == nil {
		t.Fatal("OpenExisting of an empty database lists tags")
	}
	if list() == nil {
		t.Fatal("a failed OpenExisting left tables behind")
	}
	s, err := segmenturl.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Tags(ctx); err != nil {
		t.Errorf("Open did not create the tables: %v", err)
	}
}

// TestRegistered: the file store is always there, and a build with an engine
// family's tag has every scheme of that family, registered by the family's store
// package; a build without it has none of them.
func TestRegistered(t *testing.T) {
	if !slices.Contains(segmenturl.Schemes(), "file") {
		t.Errorf("Schemes() = %q lacks file", segmenturl.Schemes())
	}
	for _, f := range engines.Families() {
		for _, s := range f.Schemes {
			if got := slices.Contains(segmenturl.Schemes(), s); got != (buildtags.Built(f) && f.Package(engines.SegmentStore) != "") {
				t.Errorf("with tags %q, Schemes() = %q: %s registered = %v", buildtags.Tags(), segmenturl.Schemes(), s, got)
			}
		}
	}
}

// TestNotBuilt: a scheme whose store package the program does not import is
// refused with what to do (in flurry's own builds, the build tag to use), and the
// password stays out of the message; an unknown scheme is no such error.
func TestNotBuilt(t *testing.T) {
	for _, f := range engines.Families() {
		for _, scheme := range f.Schemes {
			if engines.Has(engines.SegmentStore, scheme) {
				continue
			}
			_, err := segmenturl.Open(context.Background(), scheme+"://u:secret@127.0.0.1:1/x")
			if f.Package(engines.SegmentStore) == "" {
				// A family of lease stores only (ZooKeeper): no tag would help.
				if want := "segment: " + scheme + ":// names a " + f.Name + " lease store; there is no " + f.Name + " segment store: use one of "; err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("Open(%s://...): %v; want %q...", scheme, err, want)
				}
				continue
			}
			nb, ok := errors.AsType[*engines.NotBuiltError](err)
			if !ok || nb.Kind != engines.SegmentStore || !strings.Contains(err.Error(), scheme+":// needs a flurry built with -tags "+f.Tag+" (or flurry_full)") || strings.Contains(err.Error(), "secret") {
				t.Errorf("Open(%s://...) in a build without %s: %v", scheme, f.Tag, err)
			}
		}
	}
	for _, s := range segmenturl.Schemes() {
		if err := engines.Check(engines.SegmentStore, s); err != nil {
			t.Errorf("Schemes lists %s, which this program leaves out: %v", s, err)
		}
	}
	if _, err := segmenturl.Open(context.Background(), "nope://x"); err == nil || errors.As(err, new(*engines.NotBuiltError)) {
		t.Errorf("Open(nope://x): %v, want an unknown-scheme error", err)
	}
}

// TestRegisterRefuses: Register panics, as sql.Register does, on a scheme
// registered twice and on a nil Opener.
func TestRegisterRefuses(t *testing.T) {
	open := func(context.Context, string, segmenturl.OpenOptions) (segment.Store, error) {
		return nil, errors.New("unused")
	}
	for _, tc := range []struct {
		name   string
		scheme string
		open   segmenturl.Opener
		want   string
	}{
		{"twice", "file", open, "segmenturl.Register called twice for file"},
		{"nil", "segmenturl-test-nil", nil, "nil Opener"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("Register(%q) panicked with %v; want %q", tc.scheme, r, tc.want)
				}
			}()
			segmenturl.Register(tc.scheme, tc.open)
		})
	}
}
