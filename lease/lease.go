// Package lease gives a process exclusive use of a node value, with a high-water mark
// that makes reusing the value safe.
//
// A [Store] keeps, per scope and node value, who holds the value until when, and the
// value's high-water mark: the latest instant any holder reserved for issuing IDs. A
// [Session] acquires a value from a Store, renews it in the background, writes a
// reservation a window ahead before the generator may issue IDs in that window, and
// feeds the generator grants that stop it before the lease could
// have expired unrenewed. A process that takes over a value, after a crash, a
// release or an expiry, on this machine or one with another clock, starts strictly
// above the mark.
//
// Stores live in sub-packages, one per engine (etcd, Redis, SQL, a local file), and
// are tested by the same conformance suite, package leasetest; package leasestore
// holds the checks of their arguments.
package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/internal/storeurl"
)

var (
	// ErrNoFreeValue is returned by Store.Acquire when every value of the pool is held
	// by a live lease. Wait and try again, or make the pool larger.
	ErrNoFreeValue = errors.New("lease: every node value of the pool is held")
	// ErrLost is returned by Store.Renew and Store.Release when the lease is no longer
	// the caller's: it expired, or another owner took the value after it expired.
	// Stop issuing with the value and acquire again. A generator made by NewGenerator
	// returns it (wrapped, with the reason) while it holds no valid lease: none
	// acquired yet, lost, not renewed in time, or its reserved window used up; it
	// resumes by itself when its session holds the lease again.
	ErrLost = fence.ErrLost
)

// Lease is one holder's claim on one node value.
type Lease struct {
	// Scope names the pool, such as "flurry/orders/dc1": values of different scopes
	// never collide, so give each datacenter or cluster its own scope (Leaf #187).
	Scope string
	// Value is the node value, in [0, size) of the pool.
	Value int64
	// Owner names the holder for people: host, process, start time.
	Owner string
	// Token is unique to this acquisition. Renew and Release succeed only with the
	// token of the live lease, so a holder that lost its lease cannot touch the next
	// holder's.
	Token string
	// Mark is the high-water mark, in Unix milliseconds: no holder of this value
	// issued, or may still issue, an ID in a tick that starts after it. Acquire
	// returns the mark left by earlier holders; a new holder issues only in ticks that
	// start after it.
	Mark int64
	// Expires is when the store will consider the lease expired unless renewed, by
	// the store's clock. For display: holders fence on their own clock.
	Expires time.Time
	// Epoch counts the writes of the value's record: Acquire, AcquireValue, Renew,
	// Takeover (and Pin) each store one more than the record held, and return it; a
	// value never written has 0. It never decreases, also across release and expiry.
	// A journal that saved epoch e before a write finds the store at e or e-1 after a
	// crash; a store further ahead means the journal is behind the store: restored
	// from a backup or a reverted snapshot, or a copy whose original ran on.
	Epoch int64
}

// Record describes one node value of a pool, for listings.
type Record struct {
	Scope string
	Value int64
	// Owner and Token are empty when the value is free.
	Owner string
	Token string
	// Held reports whether a live lease holds the value.
	Held bool
	// Expires is the live lease's expiry, by the store's clock; zero when free.
	Expires time.Time
	// Mark is the value's high-water mark in Unix milliseconds; 0 when never used.
	Mark int64
	// Epoch is the record's write count (see Lease.Epoch); 0 when never used.
	Epoch int64
}

// Store keeps node-value leases and their high-water marks. Implementations must be
// safe for concurrent use, and each method must be atomic in the store: two callers,
// in any processes on any machines, never both hold one value of one scope. They
// check their arguments with package leasestore.
//
// Marks must survive expiry and release, and must never decrease, except by the
// Release of the live lease.
type Store interface {
	// Acquire claims for owner a value in [0, size) of scope that no live lease holds,
	// for ttl, by the store's clock. Among free values it prefers the one with the
	// lowest mark (a never-used value has mark 0), then the lowest value, so a new
	// holder rarely finds its clock behind the mark. A store may take the never-used
	// value just above the scope's highest record (or, after losing a race for it,
	// one a little further up) over a lower value of mark 0, which is as good: so it
	// finds a value without reading the scope. It returns ErrNoFreeValue when every
	// value is held.
	Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (Lease, error)
	// AcquireValue claims exactly value of scope for owner, for ttl, when no live
	// lease holds it, and returns ErrNoFreeValue when one does: for values that come
	// from configuration, a StatefulSet ordinal or an IP address. A value claimed this
	// way is held against Acquire of the same scope too, so a configured holder and a
	// pool holder can never share it, and they share its mark. value must be from 0
	// to 2^22-1.
	AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (Lease, error)
	// Renew extends a live lease to ttl from now, by the store's clock, and raises the
	// value's mark to mark if that is higher. It returns the updated lease, or an error
	// wrapping ErrLost when the lease expired or is not l's anymore; then nothing
	// changes.
	Renew(ctx context.Context, l Lease, ttl time.Duration, mark int64) (Lease, error)
	// Takeover replaces the live lease l (its Scope, Value and Token are used) with a
	// lease of a new token for owner, for ttl from now by the store's clock, and raises
	// the value's mark to mark if that is higher, in one atomic step: l's token is
	// retired, so its holder's Renew and Release fail with ErrLost from then on. It is
	// how a process resumes a lease its journal names: of two processes started from
	// copies of one journal, at most one takes the lease over. It returns the new
	// lease, whose Mark is the value's mark as it was before this call raised it (the
	// reservation of l's holder: it issues nothing above it) and whose Epoch is the
	// record's epoch plus one. It returns an error wrapping ErrLost when l expired or
	// is not the live lease anymore; then nothing changes.
	Takeover(ctx context.Context, l Lease, owner string, ttl time.Duration, mark int64) (Lease, error)
	// Release ends a live lease at once and sets the value's mark to mark, even when
	// that is below the reservation the holder wrote with Renew: only the holder knows
	// how far it really issued, and releasing with that lets the next holder start at
	// once instead of waiting for the reservation to pass. It returns an error
	// wrapping ErrLost when the lease is not l's anymore; then nothing changes.
	Release(ctx context.Context, l Lease, mark int64) error
	// List returns the values of scope that have a record (held now, or held before
	// and so with a mark), by value.
	List(ctx context.Context, scope string) ([]Record, error)
	// Close releases the store's connections. It does not release leases.
	Close() error
}

// checkScope is leasestore.CheckScope (which imports this package), for the scope a
// session derives from its Options, so that a bad one fails before any store call.
// TestChecksAgree holds the two to one rule; so for checkTTL.
func checkScope(scope string) error {
	if scope == "" || len(scope) > 200 {
		return badConfig("lease: scope %q must have 1 to 200 characters", scope)
	}
	for _, c := range scope {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '=') {
			return badConfig("lease: scope %q: use ASCII letters, digits and _-./:= only", scope)
		}
	}
	return nil
}

// Bounds of a lease's TTL and of a session's reservation Window. A TTL is how long a
// crashed holder's value stays blocked, so a day is already far more than any use
// needs; the bounds keep every deadline a session computes (the clock's nanoseconds
// plus the TTL) far from int64's limit, and every TTL within what each engine takes
// (etcd refuses more than 9e9 s).
const (
	MinTTL    = time.Second
	MaxTTL    = 24 * time.Hour
	MinWindow = 100 * time.Millisecond
	MaxWindow = time.Hour
)

// configError is an error that retrying cannot cure; it matches ErrBadConfig, and
// its cause, if any.
type configError struct {
	msg string
	err error
}

func (e *configError) Error() string        { return e.msg }
func (e *configError) Is(target error) bool { return target == ErrBadConfig }
func (e *configError) Unwrap() error        { return e.err }

func badConfig(format string, a ...any) error {
	return &configError{msg: fmt.Sprintf(format, a...)}
}

// checkTTL is leasestore.CheckTTL, for ResolveTiming: a whole number of milliseconds
// from MinTTL to MaxTTL.
func checkTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL || ttl%time.Millisecond != 0 {
		return badConfig("lease: ttl %v must be a whole number of milliseconds from %s to %s", ttl, short(MinTTL), short(MaxTTL))
	}
	return nil
}

// checkWindow reports whether window is a session's reservation Window from
// MinWindow to MaxWindow.
func checkWindow(window time.Duration) error {
	if window < MinWindow || window > MaxWindow {
		return badConfig("lease: window %v must be from %s to %s", window, short(MinWindow), short(MaxWindow))
	}
	return nil
}

// short writes a duration without zero units: 24h, not 24h0m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// RedactURL returns a store URL with its password replaced by "xxxxx", for messages.
func RedactURL(rawURL string) string { return storeurl.Redact(rawURL) }

// MaxPinTTL is the longest ttl Pinner.Pin takes: a century, far beyond any
// layout's use, and within what every engine takes (etcd refuses more than 9e9 s)
// and what a deadline in nanoseconds holds.
const MaxPinTTL = 100 * 365 * 24 * time.Hour

// Pinner is implemented by stores that can extend a lease far beyond MaxTTL, for
// a holder that cannot renew: a database that makes IDs itself (package indb)
// holds its node value for as long as its function is installed, and releases it
// when the function is removed. It is optional, found by a type assertion;
// the file, SQL, Redis, etcd and memory stores implement it.
type Pinner interface {
	// Pin extends the live lease l to ttl from now, by the store's clock, and
	// raises the value's mark to mark if that is higher, as Renew does; ttl may be
	// from MinTTL to MaxPinTTL. It returns the updated lease (etcd's has a new
	// Token), or an error wrapping ErrLost when l is not live.
	Pin(ctx context.Context, l Lease, ttl time.Duration, mark int64) (Lease, error)
}
