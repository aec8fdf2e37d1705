//go:build unix

package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// lookPath finds a server binary an outage test starts itself, or skips (fails
// with FLURRY_TEST_REQUIRE=1) naming it.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		msg := name + " not installed (not on PATH); the outage test needs its own server to stop"
		if Required() {
			t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
		}
		t.Skip(msg)
	}
	return bin
}

// start starts cmd, stops it when the test ends (continuing it first, in case the
// test left it stopped), and waits until port answers on 127.0.0.1.
func start(t testing.TB, cmd *exec.Cmd, port int, wait time.Duration, log string) *exec.Cmd {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(wait); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return cmd
		}
		if time.Now().After(deadline) {
			var b []byte
			if log != "" {
				b, _ = os.ReadFile(log)
			}
			t.Fatalf("%s on port %d did not start: %v\n%s", filepath.Base(cmd.Path), port, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartRedis starts a throwaway redis-server without persistence on port, for a
// test that stops or kills it, and waits until it answers. It is killed when the
// test ends.
func StartRedis(t testing.TB, port int) *exec.Cmd {
	t.Helper()
	bin := lookPath(t, "redis-server")
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	return start(t, cmd, port, 10*time.Second, "")
}

// StartEtcd starts a throwaway one-member etcd with its data and log in dir,
// serving clients on port client, and waits until it answers. Starting it again
// on the same dir restarts it with its data. It is killed when the test ends.
func StartEtcd(t testing.TB, dir string, client, peer int) *exec.Cmd {
	t.Helper()
	bin := lookPath(t, "etcd")
	c, p := fmt.Sprintf("http://127.0.0.1:%d", client), fmt.Sprintf("http://127.0.0.1:%d", peer)
	logName := filepath.Join(dir, "log")
	log, err := os.OpenFile(logName, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(bin, "--name", "t", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", c, "--advertise-client-urls", c,
		"--listen-peer-urls", p, "--initial-advertise-peer-urls", p, "--initial-cluster", "t="+p)
	cmd.Stdout, cmd.Stderr = log, log
	return start(t, cmd, client, 15*time.Second, logName)
}
