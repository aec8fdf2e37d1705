package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/zkconn"
	"github.com/flurryid/flurry/verify/conformance"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestServeLeafOwnAddress: flurry serve on a leafzk:// store at the address it
// listens on registers that address's node; stopped with SIGTERM and started
// again on it, it takes its worker ID back at once (it tells the store its
// listener's address, which the store then does not ask whether a Leaf server
// runs there, and a node it wrote last there does not wait fresh=), rather than
// waiting the 10 s of fresh= or taking its own listener, which accepts
// connections before it serves, for a Leaf server's.
func TestServeLeafOwnAddress(t *testing.T) {
	testenv.NeedScheme(t, "leafzk")
	o, err := zkconn.ParseURL(testenv.ZooKeeper.URL(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildServe(t)
	name := "servetest." + conformance.Suffix()
	t.Cleanup(func() { // the test's registry: forever and flurry, a node or two each
		c, err := zkconn.Open(context.Background(), zkconn.Options{Servers: o.Servers, Prefix: "snowflake/" + name}, zkconn.Kind{Package: "test"})
		if err != nil {
			return
		}
		defer c.Close()
		ctx := context.Background()
		for _, dir := range []string{c.Prefix + "/forever", c.Prefix + "/flurry"} {
			kids, _ := c.Children(ctx, dir)
			for _, k := range kids {
				c.Delete(ctx, dir+"/"+k, -1)
			}
			c.Delete(ctx, dir, -1)
		}
		c.Delete(ctx, c.Prefix, -1)
	})
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "flurry.yaml")
	yaml := "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n      lease:\n        store: \"leafzk://" +
		strings.Join(o.Servers, ",") + "/" + name + "?addr=" + addr + "\"\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	start := func() (*exec.Cmd, chan error, time.Duration) {
		began := time.Now()
		cmd := exec.Command(bin, "serve", "--listen", addr, "--config", cfg, "--data", filepath.Join(dir, "data"))
		var log strings.Builder
		cmd.Stderr = &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		for {
			res, err := c.Get("http://" + addr + "/api/snowflake/get/default")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					return cmd, done, time.Since(began)
				}
			}
			select {
			case err := <-done:
				t.Fatalf("flurry serve exited: %v\n%s", err, log.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Since(began) > time.Minute {
				t.Fatalf("flurry serve did not issue within a minute\n%s", log.String())
			}
		}
	}
	cmd, done, _ := start()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("flurry serve stopped with %v", err)
	}
	_, _, took := start()
	if took > 5*time.Second {
		t.Fatalf("flurry serve restarted at its own address %s issued after %v; want its worker ID back at once, not after fresh= (10s)", addr, took)
	}
}
