package region

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// CacheFile is the name of the cache in a server's data directory.
const CacheFile = "region.json"

var errNoCache = errors.New("region: no cached claim")

// cached is the cache file's content: the claim as the registry confirmed it,
// and what it was confirmed for.
type cached struct {
	Name     string    `json:"name"`
	Field    string    `json:"field"`
	Value    int64     `json:"value"`
	Registry string    `json:"registry"`
	Scope    string    `json:"scope"`
	Store    string    `json:"store"` // the full identity of the region's lease store
	Claimed  time.Time `json:"claimed"`
	Saved    time.Time `json:"saved"`
}

// matches reports whether the cached claim was confirmed for o: a cache made for
// another name, value, field, registry or scope, or by a region with another
// lease store (a data directory copied from another region), is not trusted.
func (c cached) matches(o Options) bool {
	return c.Name == o.Name && c.Field == o.Field && c.Value == o.Value &&
		c.Registry == o.RegistryName && c.Scope == o.Scope && c.Store == o.Store
}

func (c cached) claim() Record {
	return Record{Claimant: Claimant{Name: c.Name, Store: StoreDigest(c.Store), Claimed: c.Claimed},
		Field: c.Field, Value: c.Value, Registry: c.Registry, Scope: c.Scope}
}

func loadCache(path string) (cached, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cached{}, errNoCache
	}
	if err != nil {
		return cached{}, fmt.Errorf("region: reading the cached claim: %w; check the data directory's permissions", err)
	}
	var c cached
	if err := json.Unmarshal(b, &c); err != nil {
		// A torn or edited file: the registry decides, as without a cache.
		return cached{}, errNoCache
	}
	return c, nil
}

// saveCache writes the claim durably: a temporary file, fsync, rename, fsync of
// the directory, so a crash leaves the old cache or the new one.
func saveCache(path string, c Record, store string) error {
	b, err := json.MarshalIndent(cached{Name: c.Name, Field: c.Field, Value: c.Value, Registry: c.Registry,
		Scope: c.Scope, Store: store, Claimed: c.Claimed, Saved: time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	f, err := os.CreateTemp(dir, CacheFile+".*")
	if err != nil {
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("region: caching the claim: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
