package segmenturl

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/segment"
)

// TestFileStore: the file store is in every build, through file:// URLs.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "segs")
	s, err := Open(ctx, "file://"+dir)
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
	if _, err := OpenExisting(ctx, "file://"+dir); err != nil {
		t.Fatal(err)
	}
}

// TestNotBuilt: in a build that leaves an engine family out, its schemes are
// refused with the build tag to use, and the password stays out of the message.
func TestNotBuilt(t *testing.T) {
	for _, f := range buildtags.Families() {
		if f.Built {
			continue
		}
		for _, scheme := range f.Schemes {
			_, err := Open(context.Background(), scheme+"://u:secret@127.0.0.1:1/x")
			var nb *buildtags.NotBuiltError
			if !errors.As(err, &nb) || !strings.Contains(err.Error(), "-tags "+f.Tag+" (or flurry_full)") || strings.Contains(err.Error(), "secret") {
				t.Errorf("Open(%s://...) in a build without %s: %v", scheme, f.Tag, err)
			}
		}
	}
	for _, s := range Schemes() {
		if err := buildtags.CheckScheme(s); err != nil {
			t.Errorf("Schemes lists %s, which this build leaves out: %v", s, err)
		}
	}
	if _, err := Open(context.Background(), "nope://x"); err == nil || errors.As(err, new(*buildtags.NotBuiltError)) {
		t.Errorf("Open(nope://x): %v, want an unknown-scheme error", err)
	}
}
