package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
)

// smallPool is the pool size below which Notes warns: a few nodes that crash
// and come back without their data directory (a new machine, an emptied volume)
// each leave a value held for the TTL, and a pool this small runs out.
const smallPool = 8

// Notes describes what the lease settings of each snowflake namespace cost, for
// `flurry serve --check`: its outage budget, how long a crashed node's value stays
// held, the store writes per node, the pool's size, and a warning when the pool is
// too small to ride out crashes. Call it on a configuration that Check accepted.
func (c *Config) Notes() []string {
	var out []string
	for _, name := range c.order() {
		ns := c.Namespaces[name]
		if ns == nil || ns.Strategy != "snowflake" {
			continue
		}
		s := ns.Snowflake
		if s == nil {
			s = &Snowflake{}
		}
		t, err := lease.ResolveTiming(s.Lease.Budget.Or(0), s.Lease.TTL.Or(0), s.Lease.Window.Or(0))
		if err != nil {
			continue // Check reports it
		}
		text := s.Layout
		if text == "" {
			text = DefaultLayout
		}
		l, err := layout.Parse(text)
		if err != nil {
			continue
		}
		pool := poolSize(l, s, c.Region)
		poolText := fmt.Sprintf("a pool of %d values", pool)
		if s.Lease.Fixed != nil {
			poolText = fmt.Sprintf("the fixed value %d", *s.Lease.Fixed)
		}
		leafzk := false
		if scheme, _, _ := strings.Cut(s.Lease.Store, "://"); strings.EqualFold(scheme, "leafzk") {
			leafzk = true
			poolText = "the worker ID of its node in Leaf's ZooKeeper registry (addr= or replace=), taken only once the node's Leaf server has stopped"
			if below := s.RandomBelow; s.StartPolicy() == "random" {
				if below == 0 {
					below = 100
				}
				poolText += "; each millisecond's sequence starts below " + strconv.Itoa(below) + ", as Leaf's does"
			}
		}
		out = append(out, fmt.Sprintf("namespace %s: rides out a lease-store outage of %v (budget); a crashed node's value stays held %v (ttl) unless the node restarts on its data directory, which resumes it at once; %.2g store writes/s per node (window %v); %s",
			name, t.Budget, t.TTL, t.StoreWritesPerSecond(), t.Every, poolText))
		if s.Lease.Fixed == nil && pool < smallPool && !leafzk {
			out = append(out, fmt.Sprintf("warning: namespace %s: a pool of %d values: %d nodes that crash and restart without their data directory within %v leave no value free for the next; lease fewer node fields' bits from configuration (node:) or use a layout with more node bits",
				name, pool, pool, t.TTL))
		}
	}
	return out
}

// poolSize is the number of values the namespace's lease draws from: 2 to the
// bits of its leased node fields (not the region's field, which its value fills).
func poolSize(l *layout.Layout, s *Snowflake, r *Region) int64 {
	given := map[string]bool{}
	if r != nil {
		given[r.FieldName()] = true // the region value fills it
	}
	for _, pair := range strings.Split(s.Node, ",") {
		if k, _, ok := strings.Cut(pair, "="); ok {
			given[strings.TrimSpace(k)] = true
		}
	}
	leased := map[string]bool{}
	for _, f := range s.Lease.Fields {
		leased[f] = true
	}
	bits := 0
	for _, f := range l.NodeFields() {
		if len(leased) > 0 && leased[f.Name] || len(leased) == 0 && !given[f.Name] {
			bits += f.Bits
		}
	}
	if bits > 62 {
		bits = 62
	}
	return int64(1) << bits
}
