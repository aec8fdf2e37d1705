//go:build linux

package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestServerState: the checks that a throwaway server answers on its own port (not a
// process that took the port first) and that a paused one has stopped.
func TestServerState(t *testing.T) {
	port := FreePort(t)
	srv := StartRedis(t, port)
	if mine, known := listensOn(srv.Process.Pid, port); !mine || !known {
		t.Errorf("listensOn(redis-server, %d) = %t, %t; want true, true", port, mine, known)
	}
	if mine, known := listensOn(os.Getpid(), port); mine || !known {
		t.Errorf("listensOn(this process, %d) = %t, %t; want false, true", port, mine, known)
	}
	if exited(srv.Process.Pid) || stopped(srv.Process.Pid) {
		t.Error("a running server counts as exited or stopped")
	}
	Pause(t, srv)
	if !stopped(srv.Process.Pid) || exited(srv.Process.Pid) {
		t.Error("a paused server does not count as stopped, or counts as exited")
	}
	srv.Process.Signal(syscall.SIGCONT)
	// A second server on the same port cannot bind it and exits.
	second := exec.Command(srv.Path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer second.Process.Wait()
	// Until it is waited for, it is a zombie, which counts as exited.
	for deadline := time.Now().Add(time.Minute); !exited(second.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a second server on a taken port has not exited after a minute, or does not count as exited")
		}
	}
	if mine, _ := listensOn(second.Process.Pid, port); mine {
		t.Error("the second server counts as listening on the first one's port")
	}
}
