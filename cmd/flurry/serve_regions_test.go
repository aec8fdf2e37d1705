package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestServeCheckOtherRegion: serve --check --other-region checks the regions'
// files together (the lean build's file stores; docs/multi-region.md's own
// files are checked by the client's tests), and --other-region needs --check.
func TestServeCheckOtherRegion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, region string, value int, residues string) string {
		p := filepath.Join(dir, name)
		text := "region: {name: " + region + ", value: " + string(rune('0'+value)) + ", registry: 'file:///var/lib/flurry-regions'}\n" +
			"namespaces:\n  orders: {strategy: snowflake, snowflake: {layout: twitter}}\n" +
			"  invoices: {strategy: segment, segment: {residues: " + residues + ", modulus: 4}}\n"
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eu := write("eu.yaml", "eu-west", 1, "[0]")
	us := write("us.yaml", "us-east", 2, "[1]")
	ap := write("ap.yaml", "ap-south", 2, "[0]")
	if r := cli(t, "", "serve", "--check", "--config", eu, "--other-region", us); r.code != 0 {
		t.Errorf("eu with us: %+v", r)
	}
	r := cli(t, "", "serve", "--check", "--config", eu, "--other-region", us, "--other-region", ap)
	wantOneLineError(t, r, 1, "us.yaml (region us-east) and "+ap+" (region ap-south) both have region value 2", "both serve residue 0 (mod 4)")
	wantOneLineError(t, cli(t, "", "serve", "--config", eu, "--other-region", us), 2, "--other-region goes with --check")
}
