package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease/leasestore"
	"github.com/flurryid/flurry/lease/region"
	"github.com/flurryid/flurry/segment"
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

// CheckRegions checks the configurations of several regions together, what no
// one of them can see alone: every region has its own name and value, the same
// registry, scope and field; and a segment tag served in several regions has
// the same modulus everywhere and residues no two regions share. Each problem
// names the files.
func CheckRegions(cfgs ...*Config) error {
	var errs []error
	type seen struct {
		file string
		name string
	}
	values := map[int64]seen{}
	names := map[string]string{}
	type class struct {
		file    string
		modulus int64
	}
	mods := map[string]class{}
	residues := map[string]map[int64]string{}
	var first *Config
	for _, c := range cfgs {
		r := c.Region
		if r == nil {
			errs = append(errs, fmt.Errorf("%s has no region block", c.File))
			continue
		}
		if first == nil {
			first = c
		} else if f := first.Region; f.Registry != r.Registry || f.Scope != r.Scope || f.FieldName() != r.FieldName() {
			errs = append(errs, fmt.Errorf("%s and %s name different registries, scopes or fields (%s %q %s, %s %q %s): every region must claim its value in one registry, or the registry cannot see two regions with one value",
				first.File, c.File, f.Registry, f.Scope, f.FieldName(), r.Registry, r.Scope, r.FieldName()))
		}
		if r.Value != nil {
			if o, dup := values[*r.Value]; dup && o.name != r.Name {
				errs = append(errs, fmt.Errorf("%s (region %s) and %s (region %s) both have region value %d: their IDs collide; give each region its own", o.file, o.name, c.File, r.Name, *r.Value))
			}
			values[*r.Value] = seen{c.File, r.Name}
		}
		if o, dup := names[r.Name]; dup {
			errs = append(errs, fmt.Errorf("%s and %s both name their region %s: give each region its own name", o, c.File, r.Name))
		}
		names[r.Name] = c.File
		for _, name := range c.order() {
			ns := c.Namespaces[name]
			if ns == nil || ns.Strategy != "segment" || ns.Segment == nil {
				continue
			}
			sg := ns.Segment
			tag := sg.Tag
			if tag == "" {
				tag = name
			}
			n := max(len(sg.Stores), 1)
			res, mod, err := segment.CheckResidues(n, sg.Residues, sg.Modulus)
			if err != nil {
				continue // reported by Check
			}
			if o, ok := mods[tag]; ok && o.modulus != mod {
				errs = append(errs, fmt.Errorf("segment tag %s has modulus %d in %s and %d in %s: give every region the same modulus", tag, o.modulus, o.file, mod, c.File))
			}
			mods[tag] = class{c.File, mod}
			if residues[tag] == nil {
				residues[tag] = map[int64]string{}
			}
			for _, x := range res {
				if o, dup := residues[tag][x]; dup && o != c.File {
					errs = append(errs, fmt.Errorf("segment tag %s: %s and %s both serve residue %d (mod %d): their IDs collide; give each region residues of its own", tag, o, c.File, x, mod))
				}
				residues[tag][x] = c.File
			}
		}
	}
	return errors.Join(errs...)
}
