package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/verify/testenv"
)

// copyConfig writes a configuration for data directory data whose namespace
// "ids" leases its node value as lease says (YAML flow mapping), and returns its
// path.
func copyConfig(t *testing.T, data, lease string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "flurry.yaml")
	body := "data_dir: '" + data + "'\nnamespaces:\n  ids:\n    strategy: snowflake\n    snowflake: {lease: " + lease + "}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// cpA copies a data directory as cp -a does.
func cpA(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v %s", from, to, err, out)
	}
}

// batches fetches n batches of size IDs from namespace ids of each server at
// once, back to back, and returns every server's IDs. With n 0, each server is
// asked until for has passed instead. A failed request fails t (Errorf) and ends
// that server's batches.
func batches(t *testing.T, c *http.Client, n, size int, until time.Duration, servers ...*serveProc) [][]flurry.ID {
	t.Helper()
	out := make([][]flurry.ID, len(servers))
	end := time.Now().Add(until)
	var wg sync.WaitGroup
	for i, p := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; n == 0 && time.Now().Before(end) || b < n; b++ {
				res, err := c.Get(fmt.Sprintf("%s/v1/ids/next?count=%d&format=text", p.base, size))
				if err != nil {
					t.Errorf("server %d: %v", i, err)
					return
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != 200 {
					t.Errorf("server %d batch %d: %d %q %v", i, b, res.StatusCode, body, err)
					return
				}
				for _, line := range strings.Fields(string(body)) {
					id, err := flurry.ParseID(line)
					if err != nil {
						t.Errorf("server %d: %v", i, err)
						return
					}
					out[i] = append(out[i], id)
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// countDuplicates returns how many IDs of sets were issued before.
func countDuplicates(t *testing.T, sets ...[]flurry.ID) int {
	t.Helper()
	if t.Failed() {
		t.FailNow()
	}
	seen := make(map[flurry.ID]bool)
	dups := 0
	for _, ids := range sets {
		for _, id := range ids {
			if seen[id] {
				dups++
			}
			seen[id] = true
		}
	}
	return dups
}

// A data directory copied with cp -a (after a crash, while its server runs, or
// restored from a backup onto a clock that came back with it), with a snowflake
// namespace leased from etcd: one server on each copy, 200 batches of 1,000 IDs
// from each, and not one ID twice. Only one process can take over the journal's
// lease; a copy acquires another value, and a restored journal is not trusted.
func TestServeCopiedDataDirectory(t *testing.T) {
	testenv.NeedScheme(t, "etcd")
	etcd := testenv.Etcd.URL(t)
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	suffix := make([]byte, 4)
	rand.Read(suffix)
	lease := func(name string) string {
		return "{store: '" + etcd + "', scope: 'copied-" + name + "-" + hex.EncodeToString(suffix) + "'}"
	}

	t.Run("crashed copy", func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "data"), filepath.Join(dir, "data2")
		cfgA, cfgB := copyConfig(t, a, lease("crashed")), copyConfig(t, b, lease("crashed"))
		p := startServe(t, bin, c, "http", nil, "--config", cfgA)
		before := batches(t, c, 20, 1000, 0, p)[0]
		if err := p.stop(t, syscall.SIGKILL); err == nil {
			t.Fatal("kill -9 ended the process with status 0")
		}
		cpA(t, a, b)
		pa := startServe(t, bin, c, "http", nil, "--config", cfgA)
		pb := startServe(t, bin, c, "http", nil, "--config", cfgB)
		ids := batches(t, c, 200, 1000, 0, pa, pb)
		if n := countDuplicates(t, before, ids[0], ids[1]); n > 0 {
			t.Fatalf("%d duplicate IDs in %d from the crashed server and one server on each copy of its data directory\noriginal:\n%s\ncopy:\n%s",
				n, len(before)+len(ids[0])+len(ids[1]), grepLines(pa.log(), "lease:"), grepLines(pb.log(), "lease:"))
		}
	})

	t.Run("running copy", func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "data"), filepath.Join(dir, "data2")
		cfgA, cfgB := copyConfig(t, a, lease("running")), copyConfig(t, b, lease("running"))
		pa := startServe(t, bin, c, "http", nil, "--config", cfgA)
		before := batches(t, c, 20, 1000, 0, pa)[0]
		cpA(t, a, b) // while it runs
		pb := startServe(t, bin, c, "http", nil, "--config", cfgB)
		// A copy that resumed the original's lease would start above the
		// journal's mark, a few seconds ahead: the original, asked on for 6 s,
		// reaches the ticks the copy issues in.
		var orig, copied []flurry.ID
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); orig = batches(t, c, 0, 1000, 6*time.Second, pa)[0] }()
		copied = batches(t, c, 200, 1000, 0, pb)[0]
		wg.Wait()
		if n := countDuplicates(t, before, orig, copied); n > 0 {
			t.Fatalf("%d duplicate IDs from a server and one on a copy of its data directory made while it ran\noriginal:\n%s\ncopy:\n%s",
				n, grepLines(pa.log(), "lease:"), grepLines(pb.log(), "lease:"))
		}
	})

	t.Run("restored backup", func(t *testing.T) {
		dir := t.TempDir()
		a, backup := filepath.Join(dir, "data"), filepath.Join(dir, "backup")
		cfg := copyConfig(t, a, lease("restored"))
		p := startServe(t, bin, c, "http", nil, "--config", cfg)
		before := batches(t, c, 20, 1000, 0, p)[0]
		cpA(t, a, backup)
		taken := time.Now()
		// The server issues on after the backup, through the ticks that the
		// backup's journal mark (up to two renewal intervals, 4 s, ahead) covers.
		after := batches(t, c, 0, 1000, 6*time.Second, p)[0]
		if err := p.stop(t, syscall.SIGKILL); err == nil {
			t.Fatal("kill -9 ended the process with status 0")
		}
		if err := os.RemoveAll(a); err != nil {
			t.Fatal(err)
		}
		cpA(t, backup, a)
		// A reverted snapshot's clock comes back with it, until it syncs.
		skew := fmt.Sprintf("FLURRY_CLOCK_SKEW=-%dms", time.Since(taken).Milliseconds())
		pr := startServe(t, bin, c, "http", []string{skew}, "--config", cfg)
		ids := batches(t, c, 200, 1000, 0, pr)[0]
		if n := countDuplicates(t, before, after, ids); n > 0 {
			t.Fatalf("%d duplicate IDs from a server and its data directory restored from a backup\n%s", n, grepLines(pr.log(), "lease:"))
		}
	})
}

// A fixed node value leased from the embedded file store cannot be protected
// when the data directory is copied: each copy has its own store. flurry serve on
// the copy refuses to start, naming the copy and what to do; the original
// directory still starts.
func TestServeRefusesCopiedPrivateFixed(t *testing.T) {
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "data"), filepath.Join(dir, "data2")
	cfgA, cfgB := copyConfig(t, a, "{fixed: 1}"), copyConfig(t, b, "{fixed: 1}")
	p := startServe(t, bin, c, "http", nil, "--config", cfgA)
	textIDs(t, c, p.base, "ids", 100)
	if err := p.stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("kill -9 ended the process with status 0")
	}
	cpA(t, a, b)

	cmd := exec.Command(bin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), "--config", cfgB)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("flurry serve on a copied data directory with a fixed value from the embedded store still runs after 30 s\n%s", out)
	}
	if err == nil {
		t.Fatalf("flurry serve on the copy exited 0\n%s", out)
	}
	for _, want := range []string{"this data directory is a copy", "fixed node value 1", "embedded file store", "lease.store", "delete " + filepath.Join(b, "journal", "ids.json")} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the refusal does not say %q:\n%s", want, out)
		}
	}
	// The original directory is its own.
	p = startServe(t, bin, c, "http", nil, "--config", cfgA)
	textIDs(t, c, p.base, "ids", 100)
}
