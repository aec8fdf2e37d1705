package prometheus

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/deploy/internal/deploytest"
)

// redisServer is a redis-server of the test's own, on a fixed port and data
// directory, so that it can be killed and started again where it was, its data
// kept (append-only file, fsync on every write).
type redisServer struct {
	t        *testing.T
	bin, dir string
	addr     string
	proc     *deploytest.Proc
	starts   int
}

func newRedis(t *testing.T, bin, dir string) *redisServer {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &redisServer{t: t, bin: bin, dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", deploytest.FreePort(t))}
}

func (r *redisServer) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.starts++
	r.proc = deploytest.Start(r.t, "redis-server "+r.addr+" #"+strconv.Itoa(r.starts), nil, r.bin,
		"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--dir", r.dir, "--daemonize", "no")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r.ping() {
			return
		}
		if r.proc.Exited() || time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s does not answer PING:\n%s", r.addr, r.proc.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *redisServer) ping() bool {
	c, err := net.DialTimeout("tcp", r.addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// kill ends the server as a crash would (SIGKILL) and waits for it.
func (r *redisServer) kill() {
	r.t.Helper()
	r.proc.Signal(syscall.SIGKILL)
	r.proc.Wait(r.t, 30*time.Second)
}
