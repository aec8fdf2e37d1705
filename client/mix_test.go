package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
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

// startServeDefault starts `flurry serve` on the embedded default (no
// configuration) with a data directory of its own, and waits until it is ready.
func startServeDefault(t *testing.T, bin string) *flurryServe {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	s := &flurryServe{url: "http://" + addr, stderr: new(bytes.Buffer)}
	s.cmd = exec.Command(bin, "serve", "--data", filepath.Join(t.TempDir(), "data"), "--listen", addr)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-done
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

// mixLoad takes up to perClient IDs of namespace from each of two clients at once,
// one given a then b, the other b then a. It returns the IDs, the duplicates among
// them, and each client's first error.
func mixLoad(t *testing.T, a, b *flurryServe, namespace string, perClient int) (ids, dups int, errs [2]error) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen = map[flurry.ID]bool{}
		wg   sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for k, servers := range [][]string{{a.url, b.url}, {b.url, a.url}} {
		c, err := New(Options{Servers: servers, Batch: 1000})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Go(func() {
			got := make([]flurry.ID, 0, perClient)
			for range perClient {
				id, err := c.Next(ctx, namespace)
				if err != nil {
					errs[k] = err
					break
				}
				got = append(got, id)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range got {
				ids++
				if seen[id] {
					dups++
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
	return ids, dups, errs
}

// TestMixRefusedOnDefaults: two `flurry serve` on the embedded default, each with
// its own data directory, lease their node values from stores of their own and
// hand out segment counters from their own files, so their IDs collide. Two
// clients given both (in either order) refuse each namespace with a *MixError
// naming both servers, and what they handed out before has no duplicate.
func TestMixRefusedOnDefaults(t *testing.T) {
	bin := buildFlurry(t)
	a, b := startServeDefault(t, bin), startServeDefault(t, bin)
	for _, ns := range []string{"default", "segment"} {
		ids, dups, errs := mixLoad(t, a, b, ns, 200_000)
		t.Logf("%s: %d IDs, %d duplicates; errors: %v", ns, ids, dups, errs)
		if dups != 0 {
			t.Errorf("%s: %d duplicate IDs in %d", ns, dups, ids)
		}
		for k, err := range errs {
			me, ok := errors.AsType[*MixError](err)
			if !ok || !errors.Is(err, ErrMixed) {
				t.Errorf("%s: client %d: got %v, want a *MixError", ns, k, err)
				continue
			}
			first, second := a.url, b.url
			if k == 1 {
				first, second = b.url, a.url
			}
			if me.Namespace != ns || me.First != first || me.Second != second ||
				!strings.Contains(err.Error(), a.url) || !strings.Contains(err.Error(), b.url) || !strings.Contains(me.Reason, "only it can use") {
				t.Errorf("%s: client %d: %+v", ns, k, me)
			}
		}
	}
}

// TestMixAllowedOnSharedStore: two `flurry serve` that lease from one PostgreSQL
// table are mixed by both clients, with no duplicate.
func TestMixAllowedOnSharedStore(t *testing.T) {
	bin := buildFlurry(t)
	testenv.NeedScheme(t, "postgres")
	store := testenv.Postgres.URL(t)
	a, b := startServe(t, bin, store), startServe(t, bin, store)
	ids, dups, errs := mixLoad(t, a, b, "default", 200_000)
	t.Logf("%d IDs, %d duplicates; errors: %v", ids, dups, errs)
	if errs[0] != nil || errs[1] != nil || dups != 0 || ids != 400_000 {
		t.Errorf("%d IDs, %d duplicates, errors %v; want 400000, 0, none", ids, dups, errs)
	}
}
