package main

import (
	"slices"
	"strings"
	"testing"
)

func edges(pairs ...string) graph {
	g := graph{}
	for _, p := range pairs {
		from, to, _ := strings.Cut(p, " ")
		if g[from] == nil {
			g[from] = map[string]bool{}
		}
		if to != "" {
			g[from][to] = true
			if g[to] == nil {
				g[to] = map[string]bool{}
			}
		}
	}
	return g
}

func TestLayerOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want int
	}{
		{".", 1},
		{"internal/bitcodec", 0},
		{"internal/fence", 2},
		{"internal/verify/sim/cmd/simrun", verify},
		{"lease/leasetest", verify},
		{"lease/sqlstore", 3},
		{"lease/leasestore", 3},
		{"segment/segmentstore", 3},
		{"segment/internal/storetest", verify},
		{"segment", 3},
		{"server/internal/barecounter", 4},
		{"cmd/flurry", 5},
	} {
		got, ok := layerOf(tc.path)
		if !ok || got != tc.want {
			t.Errorf("layerOf(%q) = %d, %t; want %d", tc.path, got, ok, tc.want)
		}
	}
	if _, ok := layerOf("newtop/pkg"); ok {
		t.Error("a top-level directory no rule names has a layer")
	}
}

func TestCheck(t *testing.T) {
	g := edges(
		"snowflake layout",               // down: fine
		"lease snowflake",                // down: fine
		"internal/bitcodec layout",       // up
		"server internal/verify/testenv", // product into verification
		"internal/verify/sim server",     // verification may import anything
		"internal/retry internal/bound",  // same layer: fine
		"internal/bound internal/retry",  // ... but a cycle
		"newtop/pkg",                     // no layer
		"lease/leasetest internal/verify/conformance",
	)
	got := check(g)
	want := []string{
		"up: internal/bitcodec (layer 0, " + layers[0].name + ") imports layout (layer 1, " + layers[1].name + ")",
		"no layer: newtop/pkg: no rule in internal/verify/cmd/depgraph places it; add it to a layer",
		"product imports verification: server (" + layers[4].name + ") imports internal/verify/testenv",
		"cycle: internal/bound -> internal/retry -> internal/bound",
	}
	if !slices.Equal(got, want) {
		t.Errorf("check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if up, product, cyc, unplaced := count(got); up != 1 || product != 1 || cyc != 1 || unplaced != 1 {
		t.Errorf("count = %d up, %d product, %d cycles, %d unplaced; want 1 each", up, product, cyc, unplaced)
	}
	if p := check(edges("snowflake layout", "lease snowflake", "internal/verify/sim lease")); len(p) != 0 {
		t.Errorf("a clean graph has problems: %q", p)
	}
}
