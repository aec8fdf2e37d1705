package lease_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// A session refuses exactly the scopes and TTLs every store refuses, with the same
// message and matching ErrBadConfig: package lease keeps its own copy of those two
// checks of package leasestore, which imports lease.
func TestChecksAgree(t *testing.T) {
	same := func(what string, session, store error) {
		t.Helper()
		if (session == nil) != (store == nil) || session != nil && session.Error() != store.Error() {
			t.Errorf("%s: the session says %v, the stores %v", what, session, store)
		}
		for _, err := range []error{session, store} {
			if err != nil && !errors.Is(err, lease.ErrBadConfig) {
				t.Errorf("%s: %v does not match ErrBadConfig", what, err)
			}
		}
	}
	for _, scope := range []string{"", "a", "flurry/orders/dc1", "k=v:x_y-z.w", "bad scope", "é", "a\x00", strings.Repeat("x", 200), strings.Repeat("x", 201)} {
		same("scope "+scope, lease.SessionCheckScope(scope), leasestore.CheckScope(scope))
	}
	for _, ttl := range []time.Duration{-time.Second, 0, 999 * time.Millisecond, lease.MinTTL, 1500 * time.Microsecond, time.Minute, lease.MaxTTL, lease.MaxTTL + time.Millisecond} {
		same("ttl "+ttl.String(), lease.SessionCheckTTL(ttl), leasestore.CheckTTL(ttl))
	}
}
