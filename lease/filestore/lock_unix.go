//go:build unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/flurryid/flurry/internal/retry"
)

func lockSupported() error { return nil }

// lockFile takes an exclusive flock on path, polling so that ctx is honoured.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lease/filestore: %w", err)
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
			return nil, fmt.Errorf("lease/filestore: lock %s: %w", path, err)
		}
		// Poll about every millisecond, at random moments, so that processes
		// waiting for one lock do not wake in step.
		if err := (retry.Backoff{Min: 500 * time.Microsecond, First: time.Millisecond}).Wait(ctx, 1); err != nil {
			f.Close()
			return nil, fmt.Errorf("lease/filestore: lock %s: %w", path, err)
		}
	}
}
