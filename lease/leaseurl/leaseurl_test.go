package leaseurl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/testenv"
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
