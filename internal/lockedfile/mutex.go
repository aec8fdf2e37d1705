package lockedfile

import (
	"context"
	"fmt"
)

// Mutex is the lock of one path for the callers of one process: they queue on it in
// Go, and only the one at the head of the queue waits for the file lock in the
// kernel. A Lock of the package, called by many goroutines at once, has each of them
// wait in flock on an OS thread of its own, and a wait given up (its context ended)
// keeps its thread until it gets the lock; a thousand waiters that time out again and
// again pile up past Go's limit of 10,000 threads. Through a Mutex the process has at
// most one thread in flock per path, the given-up wait included: the next caller
// starts its wait only after that one has got the lock and let it go.
//
// Make one with NewMutex and share it among every caller of the process that locks
// the path. It is safe for concurrent use.
type Mutex struct {
	path string
	// turn holds a token while a caller of this process holds or waits for the file
	// lock; the others wait to put theirs.
	turn chan struct{}
}

// NewMutex returns the Mutex of path (created with mode 0600 if missing when first
// locked).
func NewMutex(path string) *Mutex {
	return &Mutex{path: path, turn: make(chan struct{}, 1)}
}

// Path returns the path the Mutex locks.
func (m *Mutex) Path() string { return m.path }

// Lock takes the exclusive file lock of the path, after the callers of this Mutex
// that came first, and returns the function that releases it. When ctx ends first,
// it returns ctx's error; a wait in the kernel given up this way lets the lock go at
// once if it gets it later, and only then lets the next caller try.
func (m *Mutex) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case m.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("lock %s: %w", m.path, ctx.Err())
	}
	done := func() { <-m.turn }
	release, err := lockTurn(ctx, m.path, done)
	if err != nil {
		return nil, err
	}
	return func() {
		release()
		done()
	}, nil
}
