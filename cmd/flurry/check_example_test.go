//go:build flurry_full

package main

import (
	"strings"
	"testing"
)

// TestServeCheckExample runs the documented check of the example configuration,
// `flurry serve --check --config docs/flurry.example.yaml`, as written: on a
// machine without FLURRY_ORDERS_TOKEN it names the variable and says ok.
func TestServeCheckExample(t *testing.T) {
	t.Setenv("FLURRY_ORDERS_TOKEN", "")
	r := cli(t, "", "serve", "--check", "--config", "../../docs/flurry.example.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "FLURRY_ORDERS_TOKEN is not set") || !strings.HasSuffix(r.stdout, "ok\n") {
		t.Errorf("serve --check --config docs/flurry.example.yaml: %+v; want status 0, FLURRY_ORDERS_TOKEN named, then ok", r)
	}
}
