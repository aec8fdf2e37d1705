// Package leasestore helps implement a [lease.Store], as database/sql/driver helps
// implement a database driver: it holds the checks every store makes of its
// arguments, so that all stores accept and refuse the same calls, with the same
// messages. Users of package lease do not need it; store packages call it first in
// each method, and the conformance suite (package leasetest) holds them to it.
//
// Every error it returns matches [lease.ErrBadConfig]: a call that fails a check
// fails the same way however often it is retried, and a session stops at once.
package leasestore

import (
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/lease"
)

// maxValues is the largest pool size, and 1 more than the largest value, a store
// must support (lease.Store): 2^22, enough for the widest node field of any layout.
const maxValues = 1 << 22

// badArg is a refused argument: it matches lease.ErrBadConfig.
type badArg struct{ msg string }

func (e *badArg) Error() string        { return e.msg }
func (e *badArg) Is(target error) bool { return target == lease.ErrBadConfig }

func bad(format string, a ...any) error { return &badArg{msg: fmt.Sprintf(format, a...)} }

// CheckScope reports whether a scope name is acceptable to every store: 1 to 200
// characters from ASCII letters, digits and "_-./:=". Stores check it in every method
// that takes a scope or a lease.
func CheckScope(scope string) error {
	if scope == "" || len(scope) > 200 {
		return bad("lease: scope %q must have 1 to 200 characters", scope)
	}
	for _, c := range scope {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '=') {
			return bad("lease: scope %q: use ASCII letters, digits and _-./:= only", scope)
		}
	}
	return nil
}

// CheckTTL reports whether ttl is a lease TTL every store accepts: a whole number
// of milliseconds from lease.MinTTL to lease.MaxTTL. Stores check it in Acquire,
// AcquireValue (through CheckAcquire and CheckAcquireValue) and Renew.
func CheckTTL(ttl time.Duration) error {
	if ttl < lease.MinTTL || ttl > lease.MaxTTL || ttl%time.Millisecond != 0 {
		return bad("lease: ttl %v must be a whole number of milliseconds from %s to %s", ttl, short(lease.MinTTL), short(lease.MaxTTL))
	}
	return nil
}

// CheckPinTTL checks the ttl of Pinner.Pin: a whole number of milliseconds from
// MinTTL to MaxPinTTL.
func CheckPinTTL(ttl time.Duration) error {
	if ttl < lease.MinTTL || ttl > lease.MaxPinTTL || ttl%time.Millisecond != 0 {
		return bad("lease: pin ttl %v must be a whole number of milliseconds from %s to 100 years", ttl, short(lease.MinTTL))
	}
	return nil
}

// CheckAcquire checks the arguments of Store.Acquire: scope (CheckScope), a pool
// size from 1 to 2^22, an owner of 1 to 200 bytes, and ttl (CheckTTL).
func CheckAcquire(scope string, size int64, owner string, ttl time.Duration) error {
	if err := CheckScope(scope); err != nil {
		return err
	}
	if size < 1 || size > maxValues {
		return bad("lease: pool size %d must be from 1 to %d", size, maxValues)
	}
	if owner == "" || len(owner) > 200 {
		return bad("lease: owner must have 1 to 200 characters")
	}
	return CheckTTL(ttl)
}

// CheckAcquireValue checks the arguments of Store.AcquireValue: a value from 0 to
// 2^22-1, and the rest as CheckAcquire does.
func CheckAcquireValue(scope string, value int64, owner string, ttl time.Duration) error {
	if value < 0 || value >= maxValues {
		return bad("lease: value %d must be from 0 to %d", value, maxValues-1)
	}
	return CheckAcquire(scope, 1, owner, ttl)
}

// CheckTakeover checks the arguments of Store.Takeover: l's scope and value, an owner of 1 to
// 200 characters and a ttl as CheckTTL takes.
func CheckTakeover(l lease.Lease, owner string, ttl time.Duration) error {
	return CheckAcquireValue(l.Scope, l.Value, owner, ttl)
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
