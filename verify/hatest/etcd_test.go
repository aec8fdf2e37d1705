//go:build flurry_full || flurry_etcd

package hatest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestEtcdLeaderKilled starts a 3-member etcd cluster on loopback ports and runs
// the lease and segment stores on etcd://m0,m1,m2/prefix while the leader is
// killed (SIGKILL) halfway.
func TestEtcdLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a 3-member etcd cluster; run: go test -tags flurry_full ./verify/hatest/")
	}
	bin := need(t, "etcd", "etcd-server")
	dir := t.TempDir()
	client, peer := freePorts(t, 3), freePorts(t, 3)
	var initial []string
	for i := range 3 {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, peer[i]))
	}
	procs := make([]*member, 3)
	var endpoints []string
	for i := range 3 {
		c, p := fmt.Sprintf("http://127.0.0.1:%d", client[i]), fmt.Sprintf("http://127.0.0.1:%d", peer[i])
		procs[i] = &member{cmd: proc(t, dir, fmt.Sprintf("m%d", i), bin, "--name", fmt.Sprintf("m%d", i),
			"--data-dir", filepath.Join(dir, fmt.Sprintf("m%d.data", i)),
			"--listen-client-urls", c, "--advertise-client-urls", c,
			"--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "fc-ha-"+filepath.Base(dir))}
		endpoints = append(endpoints, fmt.Sprintf("127.0.0.1:%d", client[i]))
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	leader := func() int {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			for i, ep := range endpoints {
				if procs[i].killed {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				st, err := cli.Status(ctx, ep)
				cancel()
				if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
					return i
				}
			}
		}
		t.Fatal("the cluster elected no leader within 30s")
		return -1
	}
	first := leader()
	url := "etcd://" + strings.Join(endpoints, ",") + "/fc-ha"
	exercise(t, url, url, func() {
		procs[first].killed = true
		procs[first].cmd.Process.Signal(syscall.SIGKILL)
		next := leader()
		t.Logf("killed leader m%d (%s); m%d leads now", first, endpoints[first], next)
		if next == first {
			t.Fatal("the killed member still leads")
		}
	})
	if c, err := net.DialTimeout("tcp", endpoints[first], time.Second); err == nil {
		c.Close()
		t.Errorf("the killed member %s still answers", endpoints[first])
	}
}
