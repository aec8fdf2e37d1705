package filestore

import (
	"testing"

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
		s, err := Open(good)
		if err != nil || s.Dir() != dir {
			t.Errorf("Open(%q) = %v, %v", good, s, err)
		}
	}
	for _, bad := range []string{"redis://x", "file://otherhost/x", "file://" + dir + "?ttl=1", "::"} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
}
