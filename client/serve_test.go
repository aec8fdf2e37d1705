package client

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/verify/testenv"
)

// flurryServe is a `flurry serve` process.
type flurryServe struct {
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

// buildFlurry builds the flurry command once for the package's tests
// (testenv.BuildFlurry), or skips the test when this build has no serve command.
func buildFlurry(t *testing.T) string {
	t.Helper()
	bin := testenv.BuildFlurry(t)
	if err := exec.Command(bin, "serve", "--help").Run(); err != nil {
		t.Skipf("this build of flurry has no serve command (%v)", err)
	}
	return bin
}

// startServe starts `flurry serve` with a configuration whose "default" namespace
// leases its node value from leaseStore, and waits until it is ready.
func startServe(t *testing.T, bin, leaseStore string) *flurryServe {
	t.Helper()
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	conf := filepath.Join(dir, "flurry.yaml")
	yaml := fmt.Sprintf(`listen: %s
data_dir: %s
namespaces:
  default:
    strategy: snowflake
    snowflake:
      lease:
        store: %s
`, addr, filepath.Join(dir, "data"), leaseStore)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &flurryServe{url: "http://" + addr, stderr: new(bytes.Buffer)}
	s.cmd = exec.Command(bin, "serve", "--config", conf)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { s.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				s.cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", s.url, s.stderr)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("flurry serve at %s not ready after 30s (last: %v)\n%s", s.url, err, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFailoverServeKilled runs two `flurry serve` processes whose "default"
// namespaces lease distinct node values from one store, loads them through one
// client from several goroutines, and SIGKILLs the server in use mid-load: no
// error may reach a caller and no ID may come twice. It runs on the file lease
// store and, when reachable, PostgreSQL.
func TestFailoverServeKilled(t *testing.T) {
	bin := buildFlurry(t)
	stores := map[string]func(t *testing.T) string{
		"file": func(t *testing.T) string { return "file://" + t.TempDir() },
		"postgres": func(t *testing.T) string {
			testenv.NeedScheme(t, "postgres")
			return testenv.Postgres.URL(t)
		},
	}
	for _, name := range []string{"file", "postgres"} {
		for _, tr := range []Transport{HTTP, GRPC} {
			t.Run(name+"/"+tr.String(), func(t *testing.T) {
				store := stores[name](t)
				a := startServe(t, bin, store)
				b := startServe(t, bin, store)
				failoverUnderLoad(t, tr, a, b)
			})
		}
	}
}

// TestFailoverServeStopped is TestFailoverServeKilled with the server in use
// stopped (SIGSTOP) instead of killed: its connections stay open and nothing
// answers, so no error moves the client on: a hedge does, or else Timeout.
func TestFailoverServeStopped(t *testing.T) {
	bin := buildFlurry(t)
	store := "file://" + t.TempDir()
	a := startServe(t, bin, store)
	b := startServe(t, bin, store)
	t.Cleanup(func() { a.cmd.Process.Signal(syscall.SIGCONT) })
	failoverUnderLoad(t, HTTP, a, b, syscall.SIGSTOP)
}

func failoverUnderLoad(t *testing.T, tr Transport, a, b *flurryServe, sig ...syscall.Signal) {
	stop := syscall.SIGKILL
	if len(sig) > 0 {
		stop = sig[0]
	}
	c, err := New(Options{Servers: []string{a.url, b.url}, Transport: tr, Batch: 200, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const workers, total = 8, 400_000
	var (
		taken atomic.Int64
		wg    sync.WaitGroup
		got   = make([][]flurry.ID, workers)
		errs  = make(chan error, workers)
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for w := range workers {
		wg.Go(func() {
			ns := c.Namespace("default")
			for taken.Add(1) <= total {
				id, err := ns.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				got[w] = append(got[w], id)
			}
		})
	}
	// Kill (or stop) the first server, the one in use, a third of the way through.
	for taken.Load() < total/3 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := a.cmd.Process.Signal(stop); err != nil {
		t.Fatal(err)
	}
	if stop == syscall.SIGKILL {
		a.cmd.Wait()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a caller got an error: %v", err)
	}
	seen := make(map[flurry.ID]bool, total)
	for _, ids := range got {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %d handed out twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != total {
		t.Errorf("%d IDs, want %d", len(seen), total)
	}
	st := c.Stats()
	t.Logf("stats: %+v", st)
	if st[0].Requests == 0 || st[1].Requests == 0 {
		t.Errorf("not both servers served: %+v", st)
	}
	// The client left the first server when it failed, or when a hedge to the
	// second answered first: when stopped, or before the signal if it was slow.
	if st[0].Failures+st[0].OutHedged == 0 {
		t.Errorf("the killed server was never given up on: %+v", st[0])
	}
	if stop == syscall.SIGSTOP && st[1].HedgesWon == 0 {
		t.Errorf("no hedge moved the client off the stopped server: %+v", st[1])
	}
}
