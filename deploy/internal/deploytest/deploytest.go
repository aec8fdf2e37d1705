// Package deploytest holds what the deploy module's tests share: skipping (or,
// under FLURRY_TEST_REQUIRE=1, failing) when a tool or root is missing, free
// loopback ports, building the flurry binary from the main module, and running
// processes whose output is kept for the failure message and which end with the
// test.
package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Skip skips the test with msg, or fails it when FLURRY_TEST_REQUIRE=1 (as CI
// runs), so that a machine without the tool cannot pass by skipping.
func Skip(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
		t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
	}
	t.Skip(msg)
}

// Tool returns the path of the command name, or skips naming it and the Debian
// package that has it.
func Tool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, fmt.Sprintf("%s not installed (Debian package %s)", name, debianPackage))
	}
	return p
}

// Root skips unless the test runs as root; why says what needs it.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "not root ("+why+")")
	}
}

// RepoRoot is the main module's directory: the first directory above the test's
// working directory (its package's) whose go.mod is the main module's.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/flurryid/flurry\n") {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no directory above %s holds the main module's go.mod", dir)
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, below the
// kernel's ephemeral range (ip_local_port_range): a port the kernel hands out for
// "127.0.0.1:0" may be the source port of another process's next outgoing
// connection before the server the test starts binds it ("address already in
// use" while other tests run beside it); a port below the range is never given
// out that way.
func FreePort(t testing.TB) int {
	t.Helper()
	lo := 32768 // Linux's default low end
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				lo = v
			}
		}
	}
	const base = 10000
	for range 200 {
		if lo-base < 1000 {
			break
		}
		p := base + rand.IntN(lo-base)
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			ln.Close()
			return p
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// BuildFlurry builds cmd/flurry of the main module with every store engine
// (-tags flurry_full) into dir and returns the binary's path. With a warm build
// cache (the main module's tests ran before) it only links.
func BuildFlurry(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "flurry")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "flurry_full", "-o", bin, "./cmd/flurry")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags flurry_full ./cmd/flurry: %v\n%s", err, out)
	}
	return bin
}

// Proc is a process started by a test. Its output is kept (Log); it is killed
// when the test ends if it still runs.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

type procWriter struct{ p *Proc }

func (w procWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// Start runs name with args (and extra environment variables, KEY=value) in its
// own process group.
func Start(t testing.TB, label string, env []string, name string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: label, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = procWriter{p}
	p.cmd.Stderr = procWriter{p}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Signal(syscall.SIGKILL) // ends a stopped (SIGSTOP) process too
		<-p.done
	})
	return p
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process if it still runs.
func (p *Proc) Signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(sig)
	}
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to d for the process to end and returns its exit error, or fails
// the test.
func (p *Proc) Wait(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("%s still runs after %v\n%s", p.Name, d, p.Log())
		return nil
	}
}

// Log is what the process printed so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// WaitHTTP polls url until it answers 200 or d passes (then it fails the test,
// with p's log when p is not nil); it gives up at once if p ends.
func WaitHTTP(t testing.TB, url string, d time.Duration, p *Proc) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(d)
	var last string
	for {
		res, err := c.Get(url)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
			last = res.Status + " " + strings.TrimSpace(string(b))
		} else {
			last = err.Error()
		}
		if p != nil && p.Exited() {
			t.Fatalf("%s ended while waiting for %s: %v\n%s", p.Name, url, p.err, p.Log())
		}
		if time.Now().After(deadline) {
			log := ""
			if p != nil {
				log = p.Log()
			}
			t.Fatalf("%s did not answer 200 within %v: %s\n%s", url, d, last, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
