package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/lease/region"
)

// RegionConfig describes one run of the region guard's simulation: servers of
// several regions start, crash and restart on their data directories, the
// registry is cut off and back, and data directories are copied from one server
// to another, in an order the seed draws, against the real package
// lease/region. Zero fields take the defaults of DefaultRegionConfig.
type RegionConfig struct {
	Seed uint64
	// Regions is the number of regions; each has its own lease store (its
	// identity) and draws a name and a value from Names and Values, so two
	// regions often share one (the misconfiguration the guard exists for).
	Regions int
	Names   int
	Values  int
	// Servers is the number of servers per region, each with a data directory.
	Servers int
	// Steps is the number of events.
	Steps int
	// Dir holds the data directories. Required.
	Dir string
}

// DefaultRegionConfig is a run of 6 regions of 3 servers, 3 names, 4 values and
// 2000 events.
func DefaultRegionConfig() RegionConfig {
	return RegionConfig{Regions: 6, Names: 3, Values: 4, Servers: 3, Steps: 2000}
}

// RegionReport is what one run did and the violations it saw: a region value
// issued with by two regions.
type RegionReport struct {
	Starts, Refused, FromCache, Conflicts, Unreachable, Copies int
	Violations                                                 []string
}

// Summary is one line for a test log.
func (r *RegionReport) Summary() string {
	return fmt.Sprintf("%d starts (%d from the cache), %d refused (%d conflicts, %d without the registry), %d copied data directories, %d violations",
		r.Starts, r.FromCache, r.Refused, r.Conflicts, r.Unreachable, r.Copies, len(r.Violations))
}

// cutRegistry is a registry that the partition can cut off.
type cutRegistry struct {
	*memstore.Store
	down bool
}

var errCut = errors.New("the registry is cut off")

func (c *cutRegistry) List(ctx context.Context, scope string) ([]lease.Record, error) {
	if c.down {
		return nil, errCut
	}
	return c.Store.List(ctx, scope)
}

func (c *cutRegistry) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if c.down {
		return lease.Lease{}, errCut
	}
	return c.Store.AcquireValue(ctx, scope, value, owner, ttl)
}

func (c *cutRegistry) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if c.down {
		return lease.Lease{}, errCut
	}
	return c.Store.Pin(ctx, l, ttl, mark)
}

// RunRegions runs one simulation of the region guard. The invariant: no region
// value is issued with by two regions (two region stores), ever.
func RunRegions(cfg RegionConfig) (*RegionReport, error) {
	def := DefaultRegionConfig()
	if cfg.Regions == 0 {
		cfg.Regions = def.Regions
	}
	if cfg.Names == 0 {
		cfg.Names = def.Names
	}
	if cfg.Values == 0 {
		cfg.Values = def.Values
	}
	if cfg.Servers == 0 {
		cfg.Servers = def.Servers
	}
	if cfg.Steps == 0 {
		cfg.Steps = def.Steps
	}
	if cfg.Dir == "" {
		return nil, errors.New("sim: RegionConfig.Dir is required")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	reg := &cutRegistry{Store: memstore.New(nil)}
	type srv struct {
		r       int
		dir     string
		running bool
	}
	names := make([]string, cfg.Regions)
	values := make([]int64, cfg.Regions)
	for r := range cfg.Regions {
		names[r] = fmt.Sprintf("region-%d", rng.IntN(cfg.Names))
		values[r] = int64(rng.IntN(cfg.Values))
	}
	var servers []*srv
	for r := range cfg.Regions {
		for k := range cfg.Servers {
			d := filepath.Join(cfg.Dir, fmt.Sprintf("r%d-s%d", r, k))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
			servers = append(servers, &srv{r: r, dir: d})
		}
	}
	issuedBy := map[int64]int{} // region value -> the region (store) that issued with it
	rep := &RegionReport{}
	ctx := context.Background()
	for step := range cfg.Steps {
		s := servers[rng.IntN(len(servers))]
		switch ev := rng.IntN(10); {
		case ev < 5: // a start (a restart when it runs: crash first)
			s.running = false
			o := region.Options{Registry: reg, RegistryName: "sim://registry", Name: names[s.r], Value: values[s.r],
				Field: "datacenter", Store: fmt.Sprintf("sim:region-store-%d", s.r), Cache: filepath.Join(s.dir, region.CacheFile)}
			_, src, err := region.Start(ctx, o)
			switch {
			case errors.Is(err, region.ErrConflict):
				rep.Refused++
				rep.Conflicts++
				continue
			case errors.Is(err, region.ErrRegistryUnreachable):
				rep.Refused++
				rep.Unreachable++
				continue
			case err != nil:
				return rep, fmt.Errorf("step %d: %w", step, err)
			}
			rep.Starts++
			if src == region.FromCache {
				rep.FromCache++
			}
			s.running = true
			v := values[s.r]
			if by, ok := issuedBy[v]; ok && by != s.r {
				rep.Violations = append(rep.Violations, fmt.Sprintf("step %d: value %d issued with by region %d (%s) and region %d (%s)", step, v, by, names[by], s.r, names[s.r]))
			}
			if _, ok := issuedBy[v]; !ok {
				issuedBy[v] = s.r
			}
		case ev < 8: // the registry cut off or back
			reg.down = !reg.down
		default: // a data directory copied over another server's (any region's)
			from := servers[rng.IntN(len(servers))]
			b, err := os.ReadFile(filepath.Join(from.dir, region.CacheFile))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(s.dir, region.CacheFile), b, 0o644); err != nil {
				return rep, err
			}
			rep.Copies++
		}
	}
	return rep, nil
}
