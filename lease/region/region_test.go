package region_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/lease/region"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// registry returns a file store in a directory of its own: the registry every
// region reaches.
func registry(t *testing.T) lease.Store {
	s, err := filestore.New(filepath.Join(t.TempDir(), "registry"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func opts(reg lease.Store, name string, value int64, store, dir string) region.Options {
	o := region.Options{Registry: reg, RegistryName: "file:///registry", Name: name, Value: value,
		Field: "datacenter", Store: store}
	if dir != "" {
		o.Cache = filepath.Join(dir, region.CacheFile)
	}
	return o
}

func TestClaimOnceConfirmTwice(t *testing.T) {
	reg := registry(t)
	c, err := region.Claim(ctx(t), opts(reg, "eu-west", 1, "etcd:cluster-eu", ""))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "eu-west" || c.Value != 1 || c.Claimed.IsZero() || c.Store != region.StoreDigest("etcd:cluster-eu") {
		t.Fatalf("claim %+v", c)
	}
	// A second server of the region, and a restart: the same claim, its time kept.
	again, err := region.Claim(ctx(t), opts(reg, "eu-west", 1, "etcd:cluster-eu", ""))
	if err != nil || !again.Claimed.Equal(c.Claimed) {
		t.Fatalf("second claim of the region's own value: %+v, %v; want the first claim's time %v", again, err, c.Claimed)
	}
	recs, err := reg.List(ctx(t), region.DefaultScope)
	if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Expires.Before(time.Now().Add(50*365*24*time.Hour)) {
		t.Fatalf("registry records %+v, %v: want one value pinned for a century", recs, err)
	}
	// Another region, another value: no conflict.
	if _, err := region.Claim(ctx(t), opts(reg, "us-east", 2, "etcd:cluster-us", "")); err != nil {
		t.Fatal(err)
	}
}

func TestSecondClaimantRefused(t *testing.T) {
	reg := registry(t)
	if _, err := region.Claim(ctx(t), opts(reg, "eu-west", 1, "etcd:cluster-eu", "")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, who, store string }{
		{"another name", "us-east", "etcd:cluster-us"},
		{"the same name with another lease store", "eu-west", "etcd:cluster-us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := region.Claim(ctx(t), opts(reg, tc.who, 1, tc.store, ""))
			ce, ok := errors.AsType[*region.ConflictError](err)
			if !ok || !errors.Is(err, region.ErrConflict) {
				t.Fatalf("got %v; want a *region.ConflictError", err)
			}
			if ce.Theirs.Name != "eu-west" || ce.Theirs.Store != region.StoreDigest("etcd:cluster-eu") || ce.Theirs.Claimed.IsZero() ||
				ce.Ours.Name != tc.who || ce.Ours.Store != region.StoreDigest(tc.store) {
				t.Fatalf("conflict %+v", ce)
			}
			wants := []string{"region eu-west", region.StoreDigest("etcd:cluster-eu"), region.StoreDigest(tc.store), "claimed ", "datacenter=1"}
			if tc.who == "eu-west" {
				wants = append(wants, "the region's lease store was replaced")
			} else {
				wants = append(wants, "region "+tc.who)
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

func TestValueClaimedOnce(t *testing.T) {
	reg := registry(t)
	if _, err := region.Claim(ctx(t), opts(reg, "eu-west", 1, "etcd:cluster-eu", "")); err != nil {
		t.Fatal(err)
	}
	_, err := region.Claim(ctx(t), opts(reg, "eu-west", 3, "etcd:cluster-eu", ""))
	if !errors.Is(err, region.ErrConflict) || !strings.Contains(err.Error(), "already holds datacenter=1") {
		t.Fatalf("got %v; want the region's value claimed once", err)
	}
}

// down is a registry that does not answer.
type down struct{ lease.Store }

var errDown = errors.New("connection refused")

func (down) List(context.Context, string) ([]lease.Record, error) { return nil, errDown }
func (down) AcquireValue(context.Context, string, int64, string, time.Duration) (lease.Lease, error) {
	return lease.Lease{}, errDown
}
func (down) Pin(context.Context, lease.Lease, time.Duration, int64) (lease.Lease, error) {
	return lease.Lease{}, errDown
}

func TestStartFromCacheWithoutRegistry(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	o := opts(reg, "eu-west", 1, "etcd:cluster-eu", dir)
	first, src, err := region.Start(ctx(t), o)
	if err != nil || src != region.FromRegistry {
		t.Fatalf("first start: %v from %v", err, src)
	}
	// The registry is cut off: the cached claim starts the region.
	o.Registry = down{reg}
	c, src, err := region.Start(ctx(t), o)
	if err != nil || src != region.FromCache || !c.Claimed.Equal(first.Claimed) {
		t.Fatalf("start with the registry down and a cached claim: %+v from %v, %v", c, src, err)
	}
	// Verify reports the registry down, for the background check.
	if err := region.Verify(ctx(t), o); !errors.Is(err, region.ErrRegistryUnreachable) || !errors.Is(err, errDown) {
		t.Fatalf("verify with the registry down: %v", err)
	}
	// Without a cache, a server refuses to start.
	o.Cache = filepath.Join(t.TempDir(), region.CacheFile)
	if _, _, err := region.Start(ctx(t), o); !errors.Is(err, region.ErrRegistryUnreachable) {
		t.Fatalf("start with neither registry nor cache: %v", err)
	}
}

// TestCacheNotTrusted: a cache made for another claim, or copied from another
// region's data directory, does not start a server without the registry, and
// with the registry the conflict shows.
func TestCacheNotTrusted(t *testing.T) {
	reg := registry(t)
	euDir := t.TempDir()
	eu := opts(reg, "eu-west", 1, "etcd:cluster-eu", euDir)
	if _, _, err := region.Start(ctx(t), eu); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(eu.Cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    region.Options
	}{
		{"another value", opts(reg, "eu-west", 2, "etcd:cluster-eu", "")},
		{"another registry", func() region.Options { o := eu; o.RegistryName = "etcd://other/"; return o }()},
		{"copied into another region with the same name and value", opts(reg, "eu-west", 1, "etcd:cluster-us", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Cache = filepath.Join(t.TempDir(), region.CacheFile)
			if err := os.WriteFile(o.Cache, b, 0o644); err != nil {
				t.Fatal(err)
			}
			reach := o
			o.Registry = down{reg}
			if _, src, err := region.Start(ctx(t), o); !errors.Is(err, region.ErrRegistryUnreachable) {
				t.Fatalf("start on a cache not made for this claim, registry down: %v from %v; want a refusal", err, src)
			}
			if tc.name == "copied into another region with the same name and value" {
				if _, _, err := region.Start(ctx(t), reach); !errors.Is(err, region.ErrConflict) {
					t.Fatalf("start on a copied cache, registry up: %v; want a conflict", err)
				}
			}
		})
	}
	// A torn cache: the registry decides.
	if err := os.WriteFile(eu.Cache, []byte("{\"name\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, src, err := region.Start(ctx(t), eu); err != nil || src != region.FromRegistry {
		t.Fatalf("start on a torn cache: %v from %v", err, src)
	}
}

func TestRegistryMustPin(t *testing.T) {
	_, err := region.Claim(ctx(t), opts(noPin{memstore.New(nil)}, "eu-west", 1, "x", ""))
	if !errors.Is(err, region.ErrNotPinnable) {
		t.Fatalf("got %v", err)
	}
}

// noPin hides the memory store's Pin.
type noPin struct{ lease.Store }

func TestBadOptions(t *testing.T) {
	reg := memstore.New(nil)
	for _, o := range []region.Options{
		{Name: "eu", Value: 1, Store: "x"},
		{Registry: reg, Name: "eu west", Value: 1, Store: "x"},
		{Registry: reg, Name: "eu", Value: -1, Store: "x"},
		{Registry: reg, Name: "eu", Value: 1},
	} {
		if _, err := region.Claim(ctx(t), o); !errors.Is(err, region.ErrBadOptions) {
			t.Errorf("%+v: got %v", o, err)
		}
	}
}
