//go:build unix

package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
			// The port was free when FreePort chose it, but another process
			// (another test's server) can take it before this one binds it;
			// then this one exits and the port answers for someone else, whom
			// the test would stop, kill and check instead.
			switch mine, known := listensOn(cmd.Process.Pid, port); {
			case mine || !known:
				return cmd
			case exited(cmd.Process.Pid):
				t.Fatalf("%s exited: port %d is held by another process (FreePort's port was taken before the server bound it); run the test again", filepath.Base(cmd.Path), port)
			}
			err = fmt.Errorf("port %d answers, but not for this process", port)
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

// Pause stops a throwaway server (SIGSTOP) and returns once every thread of it
// has stopped (from /proc on Linux), so that the test's next request meets a
// server that does not answer. Resume it with SIGCONT.
func Pause(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s: %v", filepath.Base(cmd.Path), err)
	}
	for deadline := time.Now().Add(time.Minute); !stopped(cmd.Process.Pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s has not stopped a minute after SIGSTOP", filepath.Base(cmd.Path))
		}
	}
}

// stopped reports whether every thread of process pid is stopped, or, where /proc
// does not say, true.
func stopped(pid int) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		if st := state(string(b)); st != 'T' && st != 't' {
			return false
		}
	}
	return true
}

// state returns the state letter of a /proc stat line: "pid (comm) S ...".
func state(stat string) byte {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// listensOn reports whether process pid holds the listening TCP socket of port on
// 127.0.0.1, from /proc (known false where /proc does not say).
func listensOn(pid, port int) (mine, known bool) {
	tcp, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false, false
	}
	want := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(tcp), "\n")[1:] {
		f := strings.Fields(line)
		// sl local_address rem_address st ... inode: a socket in LISTEN (0A).
		if len(f) > 9 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && inodes[l] {
			return true, true
		}
	}
	return false, true
}

// exited reports whether process pid has ended (a zombie until it is waited for).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	st := state(string(b))
	return st == 0 || st == 'Z' || st == 'X'
}

// ZooKeeperJar is the server of Debian's zookeeper package.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// ZooKeeperCmd returns the command that runs one ZooKeeper server (Debian's
// zookeeper package) on the configuration file cfg, with a heap, a collector and
// a compiler sized for a test machine, on IPv4 sockets, logging nowhere (Debian's server has no log binding;
// the configuration's dataDir keeps what matters). The error says what to install.
func ZooKeeperCmd(cfg string) (*exec.Cmd, error) {
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(ZooKeeperJar)
	}
	if err != nil {
		return nil, fmt.Errorf("zookeeper not installed (java and %s, Debian's zookeeper package): %v", ZooKeeperJar, err)
	}
	// IPv4 sockets: a Java socket is IPv6 by default, which start's check of who
	// listens (/proc/net/tcp) would not see.
	return exec.Command(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
		"-cp", "/etc/zookeeper/conf:"+ZooKeeperJar, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg), nil
}

// ZooKeeperConfig is the configuration of a throwaway server: ZooKeeper's usual
// 2s tick (sessions of 4s to 40s), no admin web server (it would take port 8080),
// the ruok and srvr four-letter words, and extra lines (an ensemble's server.N
// lines) after.
func ZooKeeperConfig(dataDir, clientAddr string, port int, extra ...string) string {
	lines := append([]string{
		"tickTime=2000", "initLimit=10", "syncLimit=5",
		"dataDir=" + dataDir, fmt.Sprintf("clientPort=%d", port), "clientPortAddress=" + clientAddr,
		"admin.enableServer=false", "4lw.commands.whitelist=ruok,srvr",
	}, extra...)
	return strings.Join(lines, "\n") + "\n"
}

// StartZooKeeper starts a throwaway standalone ZooKeeper with its data in dir,
// serving clients on port on 127.0.0.1, and waits until it answers. Starting it
// again on the same dir restarts it with its data. It is killed when the test
// ends. It skips (fails with FLURRY_TEST_REQUIRE=1) when ZooKeeper is not
// installed.
func StartZooKeeper(t testing.TB, dir string, port int) *exec.Cmd {
	t.Helper()
	cfg := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfg, []byte(ZooKeeperConfig(filepath.Join(dir, "data"), "127.0.0.1", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, err := ZooKeeperCmd(cfg)
	if err != nil {
		msg := err.Error() + "; the outage test needs its own server to stop"
		if Required() {
			t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
		}
		t.Skip(msg)
	}
	logName := filepath.Join(dir, "log")
	log, err := os.OpenFile(logName, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	return start(t, cmd, port, 30*time.Second, logName)
}
