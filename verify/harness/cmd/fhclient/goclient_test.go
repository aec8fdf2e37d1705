package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/client"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestErrClass: a failed Next is named by what the nodes answered, as a raw
// request's failure is, so that the report counts both workloads' refusals alike.
func TestErrClass(t *testing.T) {
	refused := connect.NewError(connect.CodeUnavailable, errors.New("namespace sfe holds no valid lease on a node value (retry shortly; it resumes once the lease is renewed)"))
	dial := connect.NewError(connect.CodeUnavailable, errors.New(`Post "http://10.0.0.9:8080/flurry.v1.IDService/Next": dial tcp 10.0.0.9:8080: connect: connection refused`))
	slow := fmt.Errorf("no answer within 2s (Options.Timeout; %w)", connect.NewError(connect.CodeDeadlineExceeded, context.DeadlineExceeded))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&client.Error{Namespace: "sfe", Attempts: []client.Attempt{{Server: "a", Err: refused}, {Server: "b", Err: refused}}},
			"503 namespace sfe holds no valid lease on a node value"},
		{&client.Error{Namespace: "sfe", Attempts: []client.Attempt{{Server: "a", Err: slow}, {Server: "b", Err: refused}, {Server: "c", Err: dial}}},
			"503 namespace sfe holds no valid lease on a node value + connection refused + timeout"},
		{fmt.Errorf("client: namespace %q: waiting for a refill: %w", "sfe", context.DeadlineExceeded), "caller's deadline passed waiting for a refill"},
		{client.ErrClosed, "client closed"},
	} {
		if got := errClass(tc.err); got != tc.want {
			t.Errorf("errClass(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// startServe starts `flurry serve` whose "default" snowflake namespace leases its
// node value from store, and waits until it is ready.
func startServe(t *testing.T, bin, store string) (string, *exec.Cmd) {
	t.Helper()
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	conf := filepath.Join(dir, "flurry.yaml")
	yaml := fmt.Sprintf("listen: %s\ndata_dir: %s\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      lease: {store: %q}\n",
		addr, filepath.Join(dir, "data"), store)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--config", conf)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", addr, stderr.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "http://" + addr, cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("flurry serve at %s not ready after 30s (last: %v)\n%s", addr, err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClientModeTracesNodes runs -mode client against two `flurry serve` processes
// and SIGKILLs one mid-run: every ID a caller got is traced to the node that issued
// it, with the time its batch was asked for, and the checker finds the ops sound.
func TestClientModeTracesNodes(t *testing.T) {
	bin := testenv.BuildFlurry(t)
	store := "file://" + t.TempDir()
	u1, p1 := startServe(t, bin, store)
	u2, _ := startServe(t, bin, store)
	cfg := config{mode: "client", names: []string{"n1", "n2"}, urls: []string{u1, u2}, nss: []string{"default"},
		workers: 2, clients: 2, timeout: 5 * time.Second, maxReq: 1_000_000, name: "c1", rate: 4000, seed: 1}
	var buf bytes.Buffer
	w := &writer{b: bufio.NewWriter(&buf)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runClient(ctx, cfg, w) }()
	time.Sleep(1500 * time.Millisecond)
	p1.Process.Kill()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.b.Flush(); err != nil {
		t.Fatal(err)
	}

	ck := checker.New([]checker.Namespace{{Name: "default", Kind: checker.Snowflake}})
	nodes := map[string]int{}
	var ids, failed, withAsk int
	err := oplog.Read(&buf, func(op checker.Op) {
		op.NoAvailability = true
		ck.Add(op)
		if op.Err != "" {
			failed++
			if op.Node != oplog.NoNode || len(op.IDs) != 0 {
				t.Errorf("failed call %+v names a node or has IDs", op)
			}
			return
		}
		ids += len(op.IDs)
		nodes[op.Node]++
		// A call that waited for a refill began before its batch was asked for:
		// then Start stands for the ask (Asked is left out).
		switch {
		case op.Asked.After(op.Start):
			t.Errorf("op %s→%s: asked %v after its start %v", op.Client, op.Node, op.Asked, op.Start)
		case !op.Asked.IsZero():
			withAsk++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if nodes[oplog.Untraced] > 0 {
		t.Errorf("%d ops hold IDs the tracer did not see", nodes[oplog.Untraced])
	}
	if withAsk == 0 {
		t.Error("no op carries the time its batch was asked for")
	}
	if nodes["n1"] == 0 || nodes["n2"] == 0 {
		t.Errorf("ops per node %v: want both nodes (the clients start on different ones)", nodes)
	}
	r := ck.Check(nil)
	if !r.OK() {
		t.Errorf("checker: %s", r.Summary())
	}
	t.Logf("%d IDs in %d ops per node %v, %d failed calls", ids, nodes["n1"]+nodes["n2"], nodes, failed)
}
