// Package conformance holds what the stores' conformance suites (verify/leasetest
// and verify/segmenttest) share: names that keep runs apart, bounded contexts, and
// stores closed when the test ends.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"testing"
	"time"
)

// Suffix returns 12 random hex digits, so that a test's scopes or tags differ from
// those of every other run against a database that keeps its data.
func Suffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Context returns a context that ends after d, or when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

// Open returns a new store from newStore, closed when the test ends.
func Open[S io.Closer](t *testing.T, newStore func(t *testing.T) S) S {
	s := newStore(t)
	t.Cleanup(func() { s.Close() })
	return s
}
