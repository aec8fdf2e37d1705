package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	"github.com/flurryid/flurry/lease/region"
	"github.com/flurryid/flurry/server/config"
)

// regionServer starts a server of region name with value, its data in dir, its
// claims in registry (a file store directory). open, when not nil, opens the
// lease stores instead of leaseurl.Open.
func regionServer(t *testing.T, dir, registry, name string, value int64, open func(context.Context, string) (lease.Store, error)) (*Server, error) {
	t.Helper()
	yaml := fmt.Sprintf("data_dir: %s\nregion: {name: %s, value: %d, registry: 'file://%s', verify: 50ms}\n"+
		"namespaces:\n  orders:\n    strategy: snowflake\n    snowflake: {layout: twitter}\n", dir, name, value, registry)
	cfg, err := config.Parse("region.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, Options{Config: cfg, OpenLeaseStore: open, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Close(ctx)
		})
	}
	return s, err
}

// TestRegionValueInEveryID: the region value fills the datacenter field of the
// IDs, and a second region with the same value is refused naming both.
func TestRegionValueInEveryID(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "registry")
	eu, err := regionServer(t, t.TempDir(), registry, "eu-west", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := eu.namespaces["orders"].ints.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tw, _ := layout.Lookup("twitter")
	d, err := tw.Decode(id)
	if err != nil || d.Nodes[0].Name != "datacenter" || d.Nodes[0].Value != 3 {
		t.Fatalf("ID %d decodes to %+v, %v; want datacenter 3, the region value", id, d, err)
	}
	_, err = regionServer(t, t.TempDir(), registry, "us-east", 3, nil)
	if !errors.Is(err, region.ErrConflict) || !strings.Contains(err.Error(), "region eu-west") || !strings.Contains(err.Error(), "region us-east") {
		t.Fatalf("a second region with value 3: %v; want a conflict naming both", err)
	}
	if _, err := regionServer(t, t.TempDir(), registry, "us-east", 4, nil); err != nil {
		t.Fatalf("a second region with its own value: %v", err)
	}
}

// TestRegionStartsOnCachedClaim: with the registry down, a server that cached
// its region's claim starts and issues, and reports the failed checks; one
// without refuses, saying what to do.
func TestRegionStartsOnCachedClaim(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "registry")
	dir := t.TempDir()
	s, err := regionServer(t, dir, registry, "eu-west", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s.Close(ctx)
	cancel()
	cut := func(ctx context.Context, url string) (lease.Store, error) {
		if strings.Contains(url, registry) {
			return nil, errors.New("dial tcp: connection refused")
		}
		return leaseurl.Open(ctx, url)
	}
	s, err = regionServer(t, dir, registry, "eu-west", 1, cut)
	if err != nil {
		t.Fatalf("start on the cached claim with the registry down: %v", err)
	}
	if _, err := s.namespaces["orders"].ints.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); s.region.failures.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the background check never reported the registry down")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.region.verified.Load() {
		t.Fatal("claim verified with the registry down")
	}
	// The registry down is no conflict: the alerts tell the two apart.
	metricLines(t, s, `flurry_region_claim_verified{region="eu-west"} 0`, `flurry_region_claim_conflict{region="eu-west"} 0`)
	_, err = regionServer(t, t.TempDir(), registry, "eu-west", 1, cut)
	if !errors.Is(err, region.ErrRegistryUnreachable) || !strings.Contains(err.Error(), "no cached claim") {
		t.Fatalf("start without a cache, registry down: %v", err)
	}
	// A cache whose claim another region took in the registry (edited or copied)
	// starts, and the background check sees the conflict.
	// (Servers of one process share no node value: each is closed before the
	// next starts.)
	closeNow := func(s *Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
	}
	closeNow(s)
	if err := os.RemoveAll(registry); err != nil {
		t.Fatal(err)
	}
	us, err := regionServer(t, t.TempDir(), registry, "us-east", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeNow(us)
	s2, err := regionServer(t, dir, registry, "eu-west", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !s2.region.conflict.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the background check never saw the conflict: " + strconv.FormatInt(s2.region.failures.Load(), 10))
		}
		time.Sleep(10 * time.Millisecond)
	}
	metricLines(t, s2, `flurry_region_claim_verified{region="eu-west"} 0`, `flurry_region_claim_conflict{region="eu-west"} 1`)
}

// metricLines fails the test unless the server's /metrics has every line of want.
func metricLines(t *testing.T, s *Server, want ...string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.handleMetrics(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, w := range want {
		if !strings.Contains(body, "\n"+w+"\n") {
			t.Errorf("/metrics lacks %q", w)
		}
	}
}
