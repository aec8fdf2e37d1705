//go:build unix

package lockedfile

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLockWaitsAndGivesUp: a second Lock of a held lock waits until it is
// released; one whose context ends first returns the context's error, and its
// abandoned wait does not keep the lock once it gets it.
func TestLockWaitsAndGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held lock with a 50 ms context: %v; want DeadlineExceeded", err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := Lock(context.Background(), path)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	select {
	case <-got:
		t.Fatal("a second Lock returned while the lock was held")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	u := <-got
	if u == nil {
		return
	}
	u()
	// The given-up wait got the lock at some point after the first release, and
	// let it go: the lock can be taken again.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	u2, err := Lock(ctx2, path)
	if err != nil {
		t.Fatalf("Lock after every holder released: %v", err)
	}
	u2()
}

// TestLockExclusive: goroutines (each with a file of its own, as processes would
// have) never hold the lock together.
func TestLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	var (
		mu     sync.Mutex
		inside int
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				u, err := Lock(context.Background(), path)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside != 1 {
					t.Errorf("%d holders at once", inside)
				}
				mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				mu.Lock()
				inside--
				mu.Unlock()
				u()
			}
		})
	}
	wg.Wait()
}
