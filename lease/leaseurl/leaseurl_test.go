// The tests are in an external package: they import the store packages of their
// build tags (verify/enginetags), and those import leaseurl.
package leaseurl_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/buildtags"
	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	_ "github.com/flurryid/flurry/verify/enginetags"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
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
		{"zk", testenv.ZooKeeper.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.NeedScheme(t, tc.name)
			u := tc.url(t)
			s, err := leaseurl.Open(context.Background(), u)
			if err != nil {
				t.Fatalf("Open(%s): %v", leaseurl.Redact(u), err)
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
	s, err := leaseurl.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, bad := range []string{"nope://x", "", "/just/a/path", "redis ://x"} {
		if _, err := leaseurl.Open(context.Background(), bad); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
	_, err = leaseurl.Open(context.Background(), "nope://user:secret@host/x")
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "use one of ") || !strings.Contains(err.Error(), "file") {
		t.Errorf("error shows the password, or does not list the schemes: %v", err)
	}
	if got := leaseurl.Redact("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("Redact = %s", got)
	}
}

// TestRegistered: the file store is always there, and a build with an engine
// family's tag has every scheme of that family, registered by the family's store
// package; a build without it has none of them.
func TestRegistered(t *testing.T) {
	if !slices.Contains(leaseurl.Schemes(), "file") {
		t.Errorf("Schemes() = %q lacks file", leaseurl.Schemes())
	}
	for _, f := range engines.Families() {
		for _, s := range f.Schemes {
			if got := slices.Contains(leaseurl.Schemes(), s); got != buildtags.Built(f) {
				t.Errorf("with tags %q, Schemes() = %q: %s registered = %v", buildtags.Tags(), leaseurl.Schemes(), s, got)
			}
		}
	}
}

// TestNotBuilt: a scheme whose store package the program does not import is
// refused with what to do (in flurry's own builds, the build tag to use), and the
// password stays out of the message.
func TestNotBuilt(t *testing.T) {
	for _, f := range engines.Families() {
		for _, scheme := range f.Schemes {
			if engines.Has(engines.LeaseStore, scheme) {
				continue
			}
			_, err := leaseurl.Open(context.Background(), scheme+"://u:secret@127.0.0.1:1/x")
			nb, ok := errors.AsType[*engines.NotBuiltError](err)
			if !ok || nb.Kind != engines.LeaseStore || !strings.Contains(err.Error(), scheme+":// needs a flurry built with -tags "+f.Tag+" (or flurry_full)") || strings.Contains(err.Error(), "secret") {
				t.Errorf("Open(%s://...) in a build without %s: %v", scheme, f.Tag, err)
			}
		}
	}
	for _, s := range leaseurl.Schemes() {
		if err := engines.Check(engines.LeaseStore, s); err != nil {
			t.Errorf("Schemes lists %s, which this program leaves out: %v", s, err)
		}
	}
}

// TestRegisterRefuses: Register panics, as sql.Register does, on a scheme
// registered twice, a nil Opener and a name that is no URL scheme.
func TestRegisterRefuses(t *testing.T) {
	open := func(context.Context, string) (lease.Store, error) { return nil, errors.New("unused") }
	for _, tc := range []struct {
		name   string
		scheme string
		open   leaseurl.Opener
		want   string
	}{
		{"twice", "file", open, "leaseurl.Register called twice for file"},
		{"twice in another case", "FILE", open, "called twice for file"},
		{"nil", "leaseurl-test-nil", nil, "nil Opener"},
		{"not a scheme", "no scheme", open, "is not a scheme name"},
		{"empty", "", open, "is not a scheme name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("Register(%q) panicked with %v; want %q", tc.scheme, r, tc.want)
				}
			}()
			leaseurl.Register(tc.scheme, tc.open)
		})
	}
	if engines.Has(engines.LeaseStore, "leaseurl-test-nil") {
		t.Error("a refused Register left its scheme registered")
	}
}
