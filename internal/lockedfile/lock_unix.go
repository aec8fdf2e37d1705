//go:build unix

package lockedfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/flurryid/flurry/internal/retry"
)

// Supported returns nil where Lock works (Unix systems), and otherwise an error
// saying so.
func Supported() error { return nil }

// Lock takes an exclusive flock on path (created with mode 0600 if missing),
// polling about every millisecond (jittered) so that ctx is honoured, and returns the function that
// releases it. The lock is released by the kernel when the process dies, so a
// killed holder never leaves it taken. Do not use it on a network file system:
// flock there is not reliable.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Poll about every millisecond, at random moments, so that processes
		// waiting for one lock do not wake in step.
		if err := (retry.Backoff{Min: 500 * time.Microsecond, First: time.Millisecond}).Wait(ctx, 1); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
}

func dirSyncUnsupported(error) bool { return false }
