package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestServeStartupFaults runs `flurry serve` as a real process through the start-up
// faults a fleet meets: a restart with the clock 30 s behind, a lease TTL that overflowed
// the session's deadlines, and a listen address that cannot be had.
func TestServeStartupFaults(t *testing.T) {
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}

	// The embedded default, stopped cleanly and started again with the clock 30 s
	// behind: the pool hands the restart a never-used node value (the lowest mark),
	// and it must still issue above the first run's IDs. By default (behind:
	// logical) it does so at once, ahead of its clock; with behind: fail each answer
	// is a typed 503 (the clock stands behind the mark) until the clock has caught
	// up, then IDs above the first run's last.
	for _, policy := range []string{"logical", "fail"} {
		t.Run("skewed restart "+policy, func(t *testing.T) {
			if policy == "fail" && testing.Short() {
				t.Skip("-short: waits 30 s for a clock 30 s behind to catch up; run: go test -tags flurry_full -run TestServeStartupFaults ./cmd/flurry/")
			}
			data := t.TempDir()
			var args []string
			if policy == "fail" {
				cfg := filepath.Join(data, "fail.yaml")
				os.WriteFile(cfg, []byte("data_dir: '"+data+"'\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake: {behind: fail}\n"), 0o600)
				args = []string{"--config", cfg}
			} else {
				args = []string{"--data", data}
			}
			p := startServe(t, bin, c, "http", nil, args...)
			first := textIDs(t, c, p.base, "default", 5000)
			max1 := first[len(first)-1]
			if err := p.stop(t, syscall.SIGTERM); err != nil {
				t.Fatalf("SIGTERM: %v\n%s", err, p.log())
			}
			p = startServe(t, bin, c, "http", []string{"FLURRY_CLOCK_SKEW=-30s"}, args...)
			prev, refused, answered := max1, 0, 0
			// The clock catches up in 30 s; the deadline only ends a run that
			// never answers, and leaves a busy machine room.
			for deadline := time.Now().Add(3 * time.Minute); answered < 5 && time.Now().Before(deadline); {
				code, h, body := fetch(t, c, "GET", p.base+"/v1/default/next?count=1000&format=text")
				switch code {
				case 200:
					for _, line := range strings.Fields(body) {
						id, err := flurry.ParseID(line)
						if err != nil {
							t.Fatal(err)
						}
						if id <= prev {
							t.Fatalf("after the restart with the clock 30 s behind: ID %d is not above %d (the first run's last ID is %d)\n%s", id, prev, max1, p.log())
						}
						prev = id
					}
					answered++
				case 503:
					if refused++; answered > 0 {
						t.Fatalf("a refusal after IDs were issued: %q", body)
					}
					if !strings.Contains(body, "stands behind its clock's high-water mark") || h.Get("Retry-After") == "" {
						t.Fatalf("503 %q (Retry-After %q): want the clock-behind refusal", body, h.Get("Retry-After"))
					}
					time.Sleep(time.Second)
				default:
					t.Fatalf("%d %q", code, body)
				}
			}
			switch {
			case answered == 0:
				t.Fatalf("%d answers, %d refusals\n%s", answered, refused, p.log())
			case policy == "fail" && refused == 0:
				t.Fatalf("behind: fail answered at once on a clock 30 s behind the first run's IDs\n%s", p.log())
			case policy == "logical" && refused != 0:
				t.Fatalf("behind: logical (the default) refused %d times before answering\n%s", refused, p.log())
			}
			t.Logf("%s: %d refusals (1 s apart) before answering; then %d answers above %d", policy, refused, answered, max1)
		})
	}

	// kill -9 of a node whose value is fixed by configuration: its lease stays live
	// in the store for the TTL (69 s by default), which no other process may take
	// over; the restart on the same data directory resumes it from its journal at
	// once and issues above the killed run's IDs.
	t.Run("kill -9 resumes", func(t *testing.T) {
		data := t.TempDir()
		cfg := filepath.Join(data, "fixed.yaml")
		os.WriteFile(cfg, []byte("data_dir: '"+data+"'\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake: {lease: {fixed: 2}}\n"), 0o600)
		p := startServe(t, bin, c, "http", nil, "--config", cfg)
		first := textIDs(t, c, p.base, "default", 5000)
		if err := p.stop(t, syscall.SIGKILL); err == nil {
			t.Fatal("kill -9 ended the process with status 0")
		}
		// The log says whether the restart resumed the lease or waited it out
		// (69 s): acquired anew, it would log "acquired node value".
		p = startServe(t, bin, c, "http", nil, "--config", cfg)
		if !p.waitLog("resumed the journal's lease", 30*time.Second) {
			t.Errorf("the restart did not resume the killed run's lease:\n%s", p.log())
		}
		next := textIDs(t, c, p.base, "default", 1000)
		if next[0] <= first[len(first)-1] {
			t.Fatalf("after kill -9: ID %d is not above the killed run's last %d\n%s", next[0], first[len(first)-1], p.log())
		}
		// Again, with the restart's clock 30 s behind: still above, at once.
		last := next[len(next)-1]
		if err := p.stop(t, syscall.SIGKILL); err == nil {
			t.Fatal("kill -9 ended the process with status 0")
		}
		p = startServe(t, bin, c, "http", []string{"FLURRY_CLOCK_SKEW=-30s"}, "--config", cfg)
		next = textIDs(t, c, p.base, "default", 1000)
		if next[0] <= last {
			t.Fatalf("after kill -9 and a restart 30 s behind: ID %d is not above the killed run's last %d\n%s", next[0], last, p.log())
		}
	})

	// A TTL whose nanoseconds overflow int64 once added to the clock: --check must
	// name it with its file and line.
	t.Run("ttl check", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "ttl.yaml")
		os.WriteFile(cfg, []byte("data_dir: '"+dir+"'\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      lease:\n        ttl: 2500000h\n"), 0o600)
		out, err := exec.Command(bin, "serve", "--config", cfg, "--check").CombinedOutput()
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "ttl.yaml:7: namespaces.default.snowflake.lease.ttl") {
			t.Fatalf("serve --check with ttl 2500000h: %v\n%s", err, out)
		}
	})

	// A port out of range is refused before anything is opened; an address that
	// is taken fails the start before any store is opened or lease taken.
	t.Run("listen", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		out, err := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:99999").CombinedOutput()
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "port 99999") {
			t.Errorf("serve --listen 127.0.0.1:99999: %v\n%s", err, out)
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the data directory was made before the listen address was checked (%v)\n%s", err, out)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out, err = exec.Command(bin, "serve", "--data", data, "--listen", ln.Addr().String()).CombinedOutput()
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "address already in use") {
			t.Errorf("serve on a taken address: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "acquired node value") {
			t.Errorf("a lease was taken before the listen address was bound:\n%s", out)
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the stores were opened before the listen address was bound (%v)\n%s", err, out)
		}
	})
}

// TestServeLostStoreFiles: a data directory whose embedded store files were
// deleted after use (segments.json, the segments directory, a lease scope's
// file) makes `flurry serve` refuse to start, naming what is missing and what to
// do, instead of serving 1, 2, 3 again or leasing values with no high-water
// mark. A first start on an empty data directory works, and so does a start
// after the file is put back.
func TestServeLostStoreFiles(t *testing.T) {
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	// probe asks /healthz of a server that may be listening but not serving
	// yet (its namespaces starting): no answer within a second is "not yet".
	probe := &http.Client{Timeout: time.Second}
	data := t.TempDir()
	segIDs := func(p *serveProc) []flurry.ID { return textIDs(t, c, p.base, "segment", 3) }
	p := startServe(t, bin, c, "http", nil, "--data", data)
	if ids := segIDs(p); ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("first start on an empty data directory: %v, want 1 2 3", ids)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.log())
	}
	// refuses runs serve on data and wants it to exit 1 with every one of wants
	// in its error; a serve that answers instead fails the test with what it
	// served.
	refuses := func(what string, wants ...string) {
		t.Helper()
		p := &serveProc{done: make(chan error, 1)}
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		p.base = "http://" + addr
		p.cmd = exec.Command(bin, "serve", "--listen", addr, "--data", data)
		p.cmd.Stderr = p
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.done <- p.cmd.Wait() }()
		defer func() {
			p.cmd.Process.Kill()
			<-p.done
		}()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			select {
			case err := <-p.done:
				p.done <- err
				if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 {
					t.Errorf("%s: serve exited with %v, want status 1\n%s", what, err, p.log())
				}
				for _, w := range wants {
					if !strings.Contains(p.log(), w) {
						t.Errorf("%s: serve's error lacks %q:\n%s", what, w, p.log())
					}
				}
				return
			case <-time.After(50 * time.Millisecond):
			}
			if res, err := probe.Get(p.base + "/healthz"); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					t.Errorf("%s: serve started and served segment IDs %v with no warning\n%s", what, segIDs(p), p.log())
					return
				}
			}
		}
		t.Errorf("%s: serve neither refused nor answered\n%s", what, p.log())
	}
	segState := filepath.Join(data, "segments", "segments.json")
	backup, err := os.ReadFile(segState)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(segState); err != nil {
		t.Fatal(err)
	}
	refuses("segments.json deleted", segState+" is missing", "restore")

	// The whole segments directory deleted: the data directory's own record
	// says it held the counters.
	if err := os.RemoveAll(filepath.Join(data, "segments")); err != nil {
		t.Fatal(err)
	}
	refuses("the segments directory deleted", filepath.Join(data, "segments"), "restore")

	// Put back, it goes on above what it served (the rest of the first range
	// was handed back at the graceful stop).
	if err := os.MkdirAll(filepath.Join(data, "segments"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segState, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	p = startServe(t, bin, c, "http", nil, "--data", data)
	if ids := segIDs(p); ids[0] != 4 {
		t.Fatalf("after segments.json was put back: %v, want 4 5 6", ids)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.log())
	}

	// The default namespace's lease scope file deleted, its lock file left: as
	// with a damaged file, the lease session does not start the namespace and
	// says why, retrying, so that the server starts by itself once the file is
	// restored (with its mark).
	scopes, err := filepath.Glob(filepath.Join(data, "leases", "*.json"))
	if err != nil || len(scopes) != 1 {
		t.Fatalf("lease scope files: %v, %v; want one", scopes, err)
	}
	scope, err := os.ReadFile(scopes[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(scopes[0]); err != nil {
		t.Fatal(err)
	}
	p = &serveProc{done: make(chan error, 1)}
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	p.base = "http://" + addr
	p.cmd = exec.Command(bin, "serve", "--listen", addr, "--data", data)
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	healthy := func() bool {
		res, err := probe.Get(p.base + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.log(), scopes[0]+" is missing"); {
		if healthy() {
			t.Fatalf("the lease scope file deleted: serve started, with no high-water mark\n%s", p.log())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease scope file deleted: serve did not say so\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if healthy() || !strings.Contains(p.log(), "restore") {
		t.Fatalf("the lease scope file deleted: serve started, or did not say what to do\n%s", p.log())
	}
	if err := os.WriteFile(scopes[0], scope, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !healthy(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start after the lease scope file was restored\n%s", p.log())
		}
	}
	if strings.Contains(p.log(), "above=1970") {
		t.Errorf("a node value was leased with no mark:\n%s", p.log())
	}
}
