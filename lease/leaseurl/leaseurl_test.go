package leaseurl

import (
	"context"

	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/internal/verify/testenv"
	"github.com/flurryid/flurry/lease/leasetest"
)

// Every scheme opens a working store against the real engine.
func TestOpenEachScheme(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite://" + t.TempDir() + "/l.db" }},
		{"postgres", testenv.Postgres.URL},
		{"mysql", testenv.MySQL.URL},
		{"redis", testenv.Redis.URL},
		{"etcd", testenv.Etcd.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.NeedScheme(t, tc.name)
			u := tc.url(t)
			s, err := Open(context.Background(), u)
			if err != nil {
				t.Fatalf("Open(%s): %v", Redact(u), err)
			}
			defer s.Close()
			scope := leasetest.Scope(t)
			l, err := s.Acquire(context.Background(), scope, 2, "leaseurl-test", 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Release(context.Background(), l, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, bad := range []string{"nope://x", "", "/just/a/path", "redis ://x"} {
		if _, err := Open(context.Background(), bad); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
	_, err = Open(context.Background(), "nope://user:secret@host/x")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows the password or is missing: %v", err)
	}
	if got := Redact("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("Redact = %s", got)
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
}
