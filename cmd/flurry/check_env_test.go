package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeCheckUnsetTokenEnv: serve --check on a machine without the serving
// machine's secrets reports each unset token_env variable and checks the rest of
// the file (exit 0, "ok"); a token that is set but too short is still refused, and
// serve itself still refuses to start without the variable.
func TestServeCheckUnsetTokenEnv(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "flurry.yaml")
	body := "namespaces:\n  docs: {strategy: objectid, token_env: [FLURRY_CHECK_TEST_TOKEN]}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLURRY_CHECK_TEST_TOKEN", "")
	r := cli(t, "", "serve", "--config", cfg, "--check")
	if r.code != 0 || !strings.Contains(r.stdout, "environment variable FLURRY_CHECK_TEST_TOKEN is not set") || !strings.HasSuffix(r.stdout, "ok\n") {
		t.Errorf("serve --check, token variable unset: %+v; want status 0, the variable named, then ok", r)
	}

	t.Setenv("FLURRY_CHECK_TEST_TOKEN", "short")
	r = cli(t, "", "serve", "--config", cfg, "--check")
	if r.code != 1 || !strings.Contains(r.stderr, "the token in FLURRY_CHECK_TEST_TOKEN is 5 characters") {
		t.Errorf("serve --check, short token: %+v; want status 1 and the length named", r)
	}

	t.Setenv("FLURRY_CHECK_TEST_TOKEN", "")
	r = cli(t, "", "serve", "--config", cfg, "--data", dir, "--listen", "127.0.0.1:0")
	if r.code == 0 || !strings.Contains(r.stderr, "FLURRY_CHECK_TEST_TOKEN is not set") {
		t.Errorf("serve without the token variable: %+v; want it refused, the variable named", r)
	}
}
