package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/verify/testenv"
)

// leanMaxBytes is the promised bound on the default binary's size (docs/building.md).
const leanMaxBytes = 25 << 20

// TestLeanBuild builds the default flurry (no build tags, whatever tags this test
// binary has) and checks what the lean build promises: it is at most 25 MB, links
// no engine package or driver, serves IDs on the embedded default, refuses the URL
// of an engine it leaves out with the build tag to use, and refuses to start over
// an earlier flurry's SQLite segment file rather than issue its IDs again.
func TestLeanBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := testenv.Build(t, testenv.FlurryPkg, "") // the lean build: no tags
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lean flurry binary (go build, no flags) on %s/%s: %d bytes (%.1f MiB)", runtime.GOOS, runtime.GOARCH, fi.Size(), float64(fi.Size())/(1<<20))
	if fi.Size() > leanMaxBytes {
		t.Errorf("the lean binary has %d bytes, over the promised %d: something pulled an engine into the default build (go list -deps ./cmd/flurry)", fi.Size(), leanMaxBytes)
	}

	t.Run("links no engine", func(t *testing.T) {
		// The engines come only from engines_*.go, by tag: no other import may
		// pull a store package, the redis strategy or a driver into the lean build.
		gobin, err := exec.LookPath("go") // go test puts its own GOROOT/bin first in PATH
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, gobin, "list", "-deps", ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps: %v\n%s", err, out)
		}
		deps := strings.Fields(string(out))
		banned := []string{"github.com/flurryid/flurry/internal/buildtags", "github.com/redis/go-redis/v9",
			"github.com/jackc/pgx/v5", "github.com/go-sql-driver/mysql", "modernc.org/sqlite", "go.etcd.io/etcd/client/v3"}
		for _, f := range engines.Families() {
			for _, k := range []engines.Kind{engines.LeaseStore, engines.SegmentStore, engines.Strategy} {
				if p := f.Package(k); p != "" {
					banned = append(banned, p)
				}
			}
		}
		for _, b := range banned {
			if slices.Contains(deps, b) {
				t.Errorf("the lean build imports %s", b)
			}
		}
	})

	t.Run("serves the embedded default", func(t *testing.T) {
		c := &http.Client{Timeout: 30 * time.Second}
		data := t.TempDir()
		p := startServe(t, bin, c, "http", nil, "--data", data)
		for _, ns := range []string{"default", "segment"} {
			ids := textIDs(t, c, p.base, ns, 100)
			for i := 1; i < len(ids); i++ {
				if ids[i] <= ids[i-1] {
					t.Fatalf("%s: %d after %d", ns, ids[i], ids[i-1])
				}
			}
		}
		if _, err := os.Stat(filepath.Join(data, "segments", "segments.json")); err != nil {
			t.Errorf("the segment namespace keeps no file store in the data directory: %v", err)
		}
		if err := p.stop(t, os.Interrupt); err != nil {
			t.Errorf("stop: %v\n%s", err, p.log())
		}
	})

	run := func(args ...string) (int, string) {
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stderr.String()
	}
	const hint = "needs a flurry built with -tags flurry_sql (or flurry_full)"

	t.Run("refuses a postgres lease URL", func(t *testing.T) {
		code, stderr := run("gen", "--lease", "postgres://u:secret@127.0.0.1:1/db", "-n", "1")
		if code != 1 || !strings.Contains(stderr, "postgres:// "+hint) || strings.Contains(stderr, "secret") {
			t.Errorf("gen --lease postgres://...: exit %d, stderr %q; want 1 and %q", code, stderr, hint)
		}
	})

	t.Run("config check names the tag per line", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "flurry.yaml")
		yaml := "namespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      lease:\n        store: postgres://u@127.0.0.1:1/db\n" +
			"  b:\n    strategy: segment\n    segment:\n      stores: [redis://127.0.0.1:1/0]\n"
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		code, stderr := run("serve", "--config", cfg, "--check")
		if code == 0 || !strings.Contains(stderr, hint) || !strings.Contains(stderr, "needs a flurry built with -tags flurry_redis (or flurry_full)") {
			t.Errorf("serve --check: exit %d, stderr %q; want both tags named", code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if strings.Contains(line, "needs a flurry built") && !strings.Contains(line, "flurry.yaml:") {
				t.Errorf("line %q does not say where in the file", line)
			}
		}
	})

	t.Run("refuses an earlier flurry's SQLite segments", func(t *testing.T) {
		data := t.TempDir()
		legacy := filepath.Join(data, "segments.db")
		if err := os.WriteFile(legacy, []byte("SQLite format 3\x00"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), legacy) || !strings.Contains(stderr.String(), "-tags flurry_sql (or flurry_full)") {
			t.Errorf("serve over %s: %v, stderr %q; want a refusal naming the file and the tag", legacy, err, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(data, "segments", "segments.json")); err == nil {
			t.Errorf("the refused start left a file store beside the SQLite file")
		}
	})
}
