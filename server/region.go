package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/region"
	"github.com/flurryid/flurry/server/config"
)

// regionGuard holds a region's claim on its value (package lease/region): it is
// found in the cache or made in the registry before any namespace leases a node
// value, and checked in the registry in the background from then on.
type regionGuard struct {
	opts   region.Options // Registry is set by the background loop
	field  string
	value  int64
	claim  region.Record
	source region.Source

	verified atomic.Bool  // the registry confirmed the claim at its last check
	failures atomic.Int64 // checks that failed: the registry down, or a conflict
	conflict atomic.Bool  // the last check found another region's claim

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startRegion finds or makes the region's claim. A server whose data directory
// caches the claim starts without the registry; one without refuses to start
// until it reaches the registry.
func (s *Server) startRegion(ctx context.Context, b *builder) (*regionGuard, error) {
	r := s.cfg.Region
	if r == nil {
		return nil, nil
	}
	storeURL := r.Store
	if storeURL == "" {
		storeURL = firstLeaseStore(s.cfg, b.dataDir)
	}
	id, err := storeIdentity(ctx, b, storeURL)
	if err != nil {
		return nil, fmt.Errorf("region %s: reading the identity of its lease store %s: %w", r.Name, lease.RedactURL(storeURL), err)
	}
	g := &regionGuard{field: r.FieldName(), value: *r.Value}
	g.opts = region.Options{RegistryName: lease.RedactURL(r.Registry), Scope: r.Scope, Name: r.Name, Value: *r.Value,
		Field: g.field, Store: id, Cache: filepath.Join(b.dataDir, region.CacheFile)}
	log := s.log.With("region", r.Name)
	var registry lease.Store
	claim, ok, err := region.Cached(g.opts)
	if err != nil {
		return nil, fmt.Errorf("region %s: %w", r.Name, err)
	}
	if ok {
		g.claim, g.source = claim, region.FromCache
		log.Info("region: the claim is cached; starting without the registry and checking it in the background",
			"field", g.field, "value", g.value, "claimed", claim.Claimed, "registry", g.opts.RegistryName)
	} else {
		registry, err = b.opts.openLease(ctx, r.Registry)
		if err != nil {
			err = fmt.Errorf("%w: opening it: %w", region.ErrRegistryUnreachable, err)
		} else {
			o := g.opts
			o.Registry = registry
			g.claim, g.source, err = region.Start(ctx, o)
		}
		if err != nil {
			if registry != nil {
				registry.Close()
			}
			if errors.Is(err, region.ErrConflict) {
				return nil, err // it names both regions
			}
			return nil, fmt.Errorf("region %s: this server has no cached claim on %s=%d (%s), so it must reach the registry %s once before it starts: %w; "+
				"start it where the registry answers, or copy region.json from the data directory of a server of the same region that ran",
				r.Name, g.field, g.value, g.opts.Cache, g.opts.RegistryName, err)
		}
		g.verified.Store(true)
		log.Info("region: the value is claimed in the registry", "field", g.field, "value", g.value, "claimed", g.claim.Claimed, "registry", g.opts.RegistryName)
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g.cancel = cancel
	g.done.Add(1)
	go func() {
		defer g.done.Done()
		g.watch(bg, b, r.Registry, registry, r.Verify.Or(config.DefaultRegionVerify), log)
	}()
	return g, nil
}

// watch checks the claim in the registry every interval, opening the registry
// first if the start did not. It logs the first failure of a run of failures
// and the recovery; a conflict is logged as an error at every check, since two
// regions with one value issue the same IDs. It never stops the namespaces: the
// region keeps issuing on its claim.
func (g *regionGuard) watch(ctx context.Context, b *builder, url string, registry lease.Store, every time.Duration, log *slog.Logger) {
	defer func() {
		if registry != nil {
			registry.Close()
		}
	}()
	failing := false
	check := func() {
		var err error
		if registry == nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			registry, err = b.opts.openLease(cctx, url)
			cancel()
		}
		if err == nil {
			o := g.opts
			o.Registry = registry
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = region.Verify(cctx, o)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		g.verified.Store(err == nil)
		g.conflict.Store(errors.Is(err, region.ErrConflict))
		switch {
		case err == nil:
			if failing {
				log.Info("region: the registry confirms the claim again", "field", g.field, "value", g.value)
			}
			failing = false
		case errors.Is(err, region.ErrConflict):
			g.failures.Add(1)
			failing = true
			log.Error("region: the registry holds another region's claim on this region's value: IDs can collide; stop one of the regions and give it another value", "err", err)
		default:
			g.failures.Add(1)
			if !failing {
				log.Warn("region: cannot check the claim in the registry; issuing on the cached claim", "registry", g.opts.RegistryName, "err", err)
			}
			failing = true
		}
	}
	if !g.verified.Load() {
		check()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		}
	}
}

func (g *regionGuard) close() {
	if g == nil {
		return
	}
	g.cancel()
	g.done.Wait()
}

// firstLeaseStore is the lease store URL of the first snowflake namespace, the
// embedded file store when it names none.
func firstLeaseStore(cfg *config.Config, dataDir string) string {
	for _, name := range cfg.Order {
		if c := cfg.Namespaces[name]; c != nil && c.Strategy == "snowflake" && c.Snowflake != nil && c.Snowflake.Lease.Store != "" {
			return c.Snowflake.Lease.Store
		}
	}
	return "file://" + filepath.Join(dataDir, "leases")
}

func storeIdentity(ctx context.Context, b *builder, url string) (string, error) {
	if dir, ok := fileDir(url); ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	st, err := b.opts.openLease(ctx, url)
	if err != nil {
		return "", err
	}
	defer st.Close()
	idr, ok := st.(lease.Identifier)
	if !ok {
		return "", fmt.Errorf("the store cannot name its data (it does not implement lease.Identifier); give region.store a file, SQL, Redis or etcd store")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	id, err := idr.Identity(cctx)
	return id.ID, err
}

func fileDir(url string) (string, bool) {
	const p = "file://"
	if len(url) > len(p) && url[:len(p)] == p {
		return url[len(p):], true
	}
	return "", false
}
