//go:build !unix

package lockedfile

import (
	"context"
	"errors"
)

// ErrUnsupported is returned by Lock and Supported on systems without flock.
var ErrUnsupported = errors.New("the file stores need a Unix system (flock); use another store")

// Supported returns nil where Lock works (Unix systems), and otherwise an error
// saying so.
func Supported() error { return ErrUnsupported }

// Lock fails with ErrUnsupported: this system has no flock.
func Lock(context.Context, string) (func(), error) { return nil, ErrUnsupported }

func lockTurn(_ context.Context, _ string, gone func()) (func(), error) {
	gone()
	return nil, ErrUnsupported
}

// TryLock fails with ErrUnsupported: this system has no flock.
func TryLock(string) (func(), bool, error) { return nil, false, ErrUnsupported }

// Windows cannot open a directory to fsync it; a rename there is as durable as the
// system makes it.
func dirSyncUnsupported(error) bool { return true }
