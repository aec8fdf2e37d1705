//go:build linux

package filestore

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/lockedfile"
)

// threads reads this process's OS thread count from /proc/self/status.
func threads(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("/proc/self/status unreadable: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestWaitersShareOneThread: a thousand calls of one scope that give up waiting for
// its file lock, held by another process, leave no OS thread each behind: the
// process has at most one wait in flock per scope. A thread per abandoned wait is
// how a process with 1,000 sessions of one scope died of thread exhaustion.
func TestWaitersShareOneThread(t *testing.T) {
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const scope, waiters = "threads", 1000
	_, lockPath := s.paths(scope)
	// Another open file of the lock stands for another process holding it.
	unlock, err := lockedfile.Lock(context.Background(), lockPath)
	if err != nil {
		t.Fatal(err)
	}
	before := threads(t)
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for range waiters {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := s.Acquire(ctx, scope, 1<<16, "waiter", time.Minute)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire while another process holds the lock: %v; want DeadlineExceeded", err)
		}
	}
	// Every call has returned; a thread per given-up wait would still be blocked.
	if after := threads(t); after > before+50 {
		t.Errorf("%d OS threads after %d given-up waits, %d before: the waits kept a thread each", after, waiters, before)
	}
	unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Acquire(ctx, scope, 1<<16, "after", time.Minute); err != nil {
		t.Fatalf("Acquire once the other holder let go: %v", err)
	}
}
