//go:build unix

package redisstore

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest/storetest"
	"github.com/flurryid/flurry/verify/testenv"
)

func TestOutage(t *testing.T) {
	port := testenv.FreePort(t)
	srv := testenv.StartRedis(t, port)
	s := open(t, fmt.Sprintf("redis://127.0.0.1:%d/0", port), Options{})
	tag := storetest.Create(t, s, 0, 10)
	if _, err := storetest.TakeWithin(t, s, tag, 10, time.Second); err != nil {
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
	// The timed-out Take may have run after SIGCONT: its values are skipped.
	if b, err := storetest.TakeWithin(t, s, tag, 10, 2*time.Second); err != nil || b.First < 11 {
		t.Fatalf("Take after SIGCONT: %+v, %v", b, err)
	}

	// A killed server fails fast; one restarted without persistence has forgotten
	// the tag, so Take says so rather than start again from 1.
	srv.Process.Kill()
	srv.Wait()
	if _, err = storetest.TakeWithin(t, s, tag, 10, 2*time.Second); err == nil {
		t.Fatal("Take against a killed server succeeded")
	}
	t.Logf("killed server: %v", err)
	testenv.StartRedis(t, port)
	if _, err = storetest.TakeWithin(t, s, tag, 10, 2*time.Second); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Take against a server that restarted empty: %v; want ErrUnknownTag", err)
	}
	tag = storetest.Create(t, s, 100, 10)
	if b, err := storetest.TakeWithin(t, s, tag, 10, 2*time.Second); err != nil || b.First != 101 {
		t.Fatalf("Take of a new tag after the restart: %+v, %v", b, err)
	}
}
