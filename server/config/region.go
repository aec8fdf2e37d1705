package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease/leasestore"
	"github.com/flurryid/flurry/lease/region"
)

// DefaultRegionField is the node field a region value fills when region.field
// is not set.
const DefaultRegionField = "datacenter"

// Region makes the server one of a region's servers: its value fills the node
// field Field of every snowflake namespace, and is claimed once in a registry
// every region reaches at start (package lease/region).
type Region struct {
	// Name names the region, "eu-west": 1 to 64 ASCII letters, digits, '_', '-'
	// or '.'. Required.
	Name string `yaml:"name"`
	// Value is the region value, unique among the regions. Required.
	Value *int64 `yaml:"value"`
	// Field is the layout's node field the value fills. Empty means
	// DefaultRegionField.
	Field string `yaml:"field"`
	// Registry is a lease store URL every region reaches, where values are
	// claimed (a global etcd, SQL database or Redis). Required.
	Registry string `yaml:"registry"`
	// Scope is the registry scope of the claims. Empty means
	// region.DefaultScope; every region must use the same one.
	Scope string `yaml:"scope"`
	// Store is the region's own lease store, whose identity tells the region
	// from any other. Empty means the lease store of the first snowflake
	// namespace (its lease.store, or the embedded file store).
	Store string `yaml:"store"`
	// Verify is how often the claim is checked in the registry in the
	// background (a Go duration). Empty means DefaultRegionVerify.
	Verify Duration `yaml:"verify"`
}

// DefaultRegionVerify is how often a region's claim is checked in the
// registry when region.verify is not set.
const DefaultRegionVerify = time.Minute

// FieldName is r.Field or DefaultRegionField.
func (r *Region) FieldName() string {
	if r.Field == "" {
		return DefaultRegionField
	}
	return r.Field
}

func (k *checker) region(c *Config) {
	r := c.Region
	if r == nil {
		return
	}
	p := []string{"region"}
	if r.Name == "" {
		k.add(append(p, "name"), "give the region's name, such as eu-west")
	} else if err := region.CheckName(r.Name); err != nil {
		k.add(append(p, "name"), "%v", err)
	}
	if r.Value == nil {
		k.add(append(p, "value"), "give the region value, unique among the regions (docs/multi-region.md)")
	} else if *r.Value < 0 {
		k.add(append(p, "value"), "%d is negative", *r.Value)
	}
	if r.Registry == "" {
		k.add(append(p, "registry"), "give the registry, a lease store URL every region reaches when it starts, such as etcd://global-etcd:2379/flurry-regions")
	} else {
		k.store(append(p, "registry"), r.Registry, engines.LeaseStore, leaseSchemes())
	}
	if r.Store != "" {
		k.store(append(p, "store"), r.Store, engines.LeaseStore, leaseSchemes())
	}
	if r.Scope != "" {
		if err := leasestore.CheckScope(r.Scope); err != nil {
			k.add(append(p, "scope"), "%v", err)
		}
	}
	k.duration(append(p, "verify"), r.Verify, false)
	field := r.FieldName()
	for _, name := range c.order() {
		ns := c.Namespaces[name]
		if ns == nil || ns.Strategy != "snowflake" {
			continue
		}
		s := ns.Snowflake
		if s == nil {
			s = &Snowflake{}
		}
		np := []string{"namespaces", name, "snowflake"}
		text := s.Layout
		if text == "" {
			text = DefaultLayout
		}
		l, err := layout.Parse(text)
		if err != nil {
			continue // reported at the layout
		}
		var f layout.Field
		ok := false
		for _, nf := range l.NodeFields() {
			if nf.Name == field {
				f, ok = nf, true
			}
		}
		if !ok {
			var names []string
			for _, f := range l.NodeFields() {
				names = append(names, f.Name)
			}
			k.add(append(np, "layout"), "the region value fills node field %q, which layout %s does not have (its node fields: %s): choose a layout with a region field, such as twitter's datacenter, or set region.field", field, l, strings.Join(names, ", "))
			continue
		}
		if r.Value != nil && *r.Value >= int64(1)<<f.Bits {
			k.add(append(p, "value"), "%d does not fit the %d bits of field %s in namespace %s's layout (0..%d)", *r.Value, f.Bits, field, name, int64(1)<<f.Bits-1)
		}
		for _, pair := range strings.Split(s.Node, ",") {
			if key, _, _ := strings.Cut(pair, "="); strings.TrimSpace(key) == field {
				k.add(append(np, "node"), "node gives %s, which the region fills (region.value): leave it out of node", field)
			}
		}
		for i, lf := range s.Lease.Fields {
			if lf == field {
				k.add(append(np, "lease", "fields", fmt.Sprint(i)), "%s is the region's field (region.field), not leased: leave it out of lease.fields", field)
			}
		}
	}
}
