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
		{"internal/fence", 0},
		{"verify/sim/cmd/simrun", verify},
		{"verify/leasetest", verify},
		{"lease/sqlstore", 3},
		{"lease/leasestore", 3},
		{"segment/segmentstore", 3},
		{"verify/segmenttest/storetest", verify},
		{"segment", 3},
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
		"snowflake layout",                 // down: fine
		"lease snowflake",                  // down: fine
		"internal/bitcodec internal/bound", // within one folder
		"server verify/testenv",            // product into verification
		"verify/sim server",                // verification may import anything
		"internal/retry internal/bound",    // same layer: fine
		"internal/bound internal/retry",    // ... but a cycle
		"snowflake/pool lease",             // up
		"newtop/pkg",                       // no layer
		"verify/leasetest verify/conformance",
	)
	got := check(g)
	want := []string{
		"no layer: newtop/pkg: no rule in verify/cmd/depgraph places it; add it to a layer",
		"product imports verification: server (" + layers[4].name + ") imports verify/testenv",
		"up: snowflake/pool (layer 2, " + layers[2].name + ") imports lease (layer 3, " + layers[3].name + ")",
		"cycle: internal/bound -> internal/retry -> internal/bound",
		"folder: server/ imports verify/ (server imports verify/testenv), a folder of a higher layer or the verification side",
		"folder: snowflake/ imports lease/ (snowflake/pool imports lease), a folder of a higher layer or the verification side",
	}
	if !slices.Equal(got, want) {
		t.Errorf("check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if up, product, cyc, unplaced, folders := count(got); up != 1 || product != 1 || cyc != 1 || unplaced != 1 || folders != 2 {
		t.Errorf("count = %d up, %d product, %d cycles, %d unplaced, %d folder problems; want 1 each and 2 folder problems", up, product, cyc, unplaced, folders)
	}
	if p := check(edges("snowflake layout", "lease snowflake", "verify/sim lease")); len(p) != 0 {
		t.Errorf("a clean graph has problems: %q", p)
	}
}

func TestCheckFolders(t *testing.T) {
	// internal/ reaching up: the shape that drew six arrows back up when the
	// verification rigs and the layout-speaking seams lived among the helpers.
	got := checkFolders(edges(
		"internal/bitcodec",
		"internal/verify/sim lease", // a rig among the helpers
		"internal/fence layout",     // ... and a helper above layout
		"layout internal/bitcodec",
		"lease internal/fence",
		"snowflake internal/bitcodec",
		"server/config internal/bitcodec",
		"server lease",
		"server snowflake", // a folder whose packages share a layer
	))
	want := []string{
		"folder: internal/ imports layout/ (internal/fence imports layout), a folder of a higher layer or the verification side",
		"folder: internal/ imports lease/ (internal/verify/sim imports lease), a folder of a higher layer or the verification side",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkFolders found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := checkFolders(edges("snowflake layout", "lease internal/fence", "verify/sim lease", "layout internal/bitcodec")); len(p) != 0 {
		t.Errorf("a clean graph by folder has problems: %q", p)
	}
	// A folder across two layers cannot be drawn as one box: a rule placing
	// one package of lease/ among the commands makes one.
	before := layers
	t.Cleanup(func() { layers = before })
	layers = append([]layer(nil), before...)
	last := len(layers) - 1
	layers[last] = layer{layers[last].name, append([]string{"lease/wide"}, layers[last].rules...)}
	got = checkFolders(edges("lease", "lease/wide lease"))
	want = []string{"folder: lease/ holds packages of layers 3 and 5 (lease/wide); move lease/wide to a folder of its layer"}
	if !slices.Equal(got, want) {
		t.Errorf("checkFolders found %q, want %q", got, want)
	}
}
