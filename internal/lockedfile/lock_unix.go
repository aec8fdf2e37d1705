//go:build unix

package lockedfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Supported returns nil where Lock works (Unix systems), and otherwise an error
// saying so.
func Supported() error { return nil }

// Lock takes an exclusive flock on path (created with mode 0600 if missing) and
// returns the function that releases it. It waits in the kernel's queue of the
// lock (a blocking flock on a thread of its own), not by polling: under
// contention a poller can miss every moment the lock is free, and the multiprocess
// segment test saw one wait out its 5 s FetchTimeout that way while others took
// the lock in turn. When ctx ends first, Lock returns ctx's error; the abandoned
// wait releases the lock at once if it gets it later. The lock is released by the
// kernel when the process dies, so a killed holder never leaves it taken. Do not
// use it on a network file system: flock there is not reliable.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	return lockTurn(ctx, path, func() {})
}

// lockTurn is Lock, calling gone once a wait given up because ctx ended has ended
// too: when it got the lock, after releasing it. A Mutex passes the end of its
// caller's turn, so that no second wait starts beside an abandoned one.
func lockTurn(ctx context.Context, path string, gone func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		gone()
		return nil, err
	}
	release := func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return release, nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		gone()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	got := make(chan error, 1)
	go func() { got <- flock(f, syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			gone()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return release, nil
	case <-ctx.Done():
		go func() {
			if <-got == nil {
				release()
			} else {
				f.Close()
			}
			gone()
		}()
		return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
	}
}

// TryLock takes an exclusive flock on path (created with mode 0600 if missing)
// without waiting: when another open file holds it, in this process or another,
// it returns held true and no error. The kernel releases the lock when the process
// dies, so a lock that is held names a live holder.
func TryLock(path string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, false, nil
}

// flock is syscall.Flock, again after an interrupted call.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func dirSyncUnsupported(error) bool { return false }
