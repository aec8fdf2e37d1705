//go:build unix

package etcdstore

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/segmenttest/storetest"
	"github.com/flurryid/flurry/verify/testenv"
)

func TestOutage(t *testing.T) {
	dir := t.TempDir()
	client, peer := testenv.FreePort(t), testenv.FreePort(t)
	srv := testenv.StartEtcd(t, dir, client, peer)
	s := open(t, fmt.Sprintf("etcd://127.0.0.1:%d/outage", client), Options{})
	tag := storetest.Create(t, s, 0, 10)
	if _, err := storetest.TakeWithin(t, s, tag, 10, 2*time.Second); err != nil {
		t.Fatal(err)
	}

	// A stopped server: Take fails within its deadline, and works once it resumes.
	testenv.Pause(t, srv)
	_, err := storetest.TakeWithin(t, s, tag, 10, 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if err == nil {
		t.Fatal("Take against a stopped server succeeded")
	}
	t.Logf("stopped server: %v", err)
	var last int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := storetest.TakeWithin(t, s, tag, 10, 2*time.Second)
		if err == nil {
			if b.First < 11 {
				t.Fatalf("Take after SIGCONT: %+v", b)
			}
			last = b.Last
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Take after SIGCONT: %v", err)
		}
	}

	// A killed server fails within the deadline; a restarted one has the tag and
	// its max on disk and goes on above them.
	srv.Process.Kill()
	srv.Wait()
	if _, err = storetest.TakeWithin(t, s, tag, 10, time.Second); err == nil {
		t.Fatal("Take against a killed server succeeded")
	}
	t.Logf("killed server: %v", err)
	testenv.StartEtcd(t, dir, client, peer)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := storetest.TakeWithin(t, s, tag, 10, 2*time.Second)
		if err == nil {
			if b.First <= last {
				t.Fatalf("Take after the restart: %+v, at or below %d", b, last)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Take after the restart: %v", err)
		}
	}
}
