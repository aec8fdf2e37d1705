//go:build flurry_full || flurry_zk

package hatest

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestZooKeeperLeaderKilled starts a 3-member ZooKeeper ensemble on loopback ports
// and runs the lease store on zk://m0,m1,m2/prefix while the leader is killed
// (SIGKILL) halfway: the lease is kept, and renewals succeed again once the other
// two have elected a new leader.
func TestZooKeeperLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a 3-member ZooKeeper ensemble; run: go test -tags flurry_full ./verify/hatest/")
	}
	dir := t.TempDir()
	client, peer, elect := freePorts(t, 3), freePorts(t, 3), freePorts(t, 3)
	var servers, addrs []string
	for i := range 3 {
		servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i+1, peer[i], elect[i]))
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", client[i]))
	}
	procs := make([]*member, 3)
	for i := range 3 {
		data := filepath.Join(dir, fmt.Sprintf("m%d.data", i))
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprint(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, fmt.Sprintf("m%d.cfg", i))
		if err := os.WriteFile(cfg, []byte(testenv.ZooKeeperConfig(data, "127.0.0.1", client[i], servers...)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd, err := testenv.ZooKeeperCmd(cfg)
		if err != nil {
			msg := err.Error() + "; the failover test starts its own servers"
			if testenv.Required() {
				t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
			}
			t.Skip(msg)
		}
		procs[i] = &member{cmd: proc(t, dir, fmt.Sprintf("m%d", i), cmd.Path, cmd.Args[1:]...)}
	}
	leader := func() int {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			for i, a := range addrs {
				if !procs[i].killed && zkMode(a) == "leader" {
					return i
				}
			}
		}
		t.Fatal("the ensemble elected no leader within 60s")
		return -1
	}
	first := leader()
	url := "zk://" + strings.Join(addrs, ",") + "/fc-ha"
	exercise(t, url, "", func() {
		procs[first].killed = true
		procs[first].cmd.Process.Signal(syscall.SIGKILL)
		start := time.Now()
		next := leader()
		t.Logf("killed leader m%d (%s); m%d leads %v later", first, addrs[first], next, time.Since(start).Round(time.Millisecond))
		if next == first {
			t.Fatal("the killed member still leads")
		}
	})
}

// zkMode asks a ZooKeeper member its mode (srvr): "leader", "follower", or ""
// when it does not answer or does not serve.
func zkMode(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(l, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}
