package lease

import (
	"context"
	"fmt"
)

// Order is the policy that says which earlier IDs a new holder of a value starts
// above. The zero value is OrderScope, the safe one.
//
// A holder starts above the value's own mark in either policy, so no ID is ever
// issued twice; the policy only decides time order across values of one scope. A
// process that restarts usually gets another value of the pool than the one it held
// (Acquire prefers the lowest mark, and a never-used value has none), so with
// OrderValue a restart on a clock that is behind issues IDs below the ones it issued
// before: unique, but a reader paging with WHERE id > last skips them.
type Order int

const (
	// OrderScope starts a new holder above the marks of every value of its scope
	// that no live lease holds, as well as above its own value's mark: above every
	// ID issued under a lease of the scope that had ended (released, or expired by
	// the store's clock) when the session read the scope's marks, right after it
	// acquired its value. Live holders' marks are left out: they are reservations
	// ahead of the clock, and those holders' IDs are concurrent with the new
	// holder's anyway. It costs one read of the scope's marks per acquisition
	// (ScopeMarker's ScopeMark where the store has it, else a Store.List), and
	// when the clock is behind an ended holder's last ID, the generator's
	// clock-behind policy applies until it catches up (by default it refuses with
	// ErrClockBehind).
	OrderScope Order = iota
	// OrderValue starts a new holder above its own value's mark only: unique, but
	// IDs of a holder whose clock is behind may fall below IDs other values of the
	// scope issued before.
	OrderValue
)

// String returns "scope" or "value".
func (o Order) String() string {
	switch o {
	case OrderScope:
		return "scope"
	case OrderValue:
		return "value"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// MarshalText returns String's name, for configuration files and flags.
func (o Order) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads "scope" or "value"; empty means OrderScope, the zero value.
// Its error matches ErrBadConfig.
func (o *Order) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "scope":
		*o = OrderScope
	case "value":
		*o = OrderValue
	default:
		return badConfig("lease: order %q: use scope (start above every ended lease of the scope, the default) or value (above the value's own mark only)", b)
	}
	return nil
}

// ScopeMarker is implemented by stores that read the mark OrderScope starts above
// without listing the scope: a session that starts in a scope of N holders reads
// one number instead of N records, so that N sessions starting together cost the
// store O(N) work, not O(N²). It is optional, found by a type assertion; the SQL,
// Redis and etcd stores implement it, and the conformance suite checks that it
// agrees with List.
type ScopeMarker interface {
	// ScopeMark returns the highest mark of the values of scope that no live lease
	// holds, leaving out value, read at one moment: what the Records of List give
	// for !Held values but value. It is 0 when there are none.
	ScopeMark(ctx context.Context, scope string, value int64) (int64, error)
}

// scopeMark returns the highest mark of the values of scope that no live lease
// holds, leaving out value (the caller's own, whose mark it has).
func scopeMark(ctx context.Context, st Store, scope string, value int64) (unixMilli, error) {
	if sm, ok := st.(ScopeMarker); ok {
		m, err := sm.ScopeMark(ctx, scope, value)
		if err != nil {
			return 0, fmt.Errorf("lease: reading the marks of scope %s (order scope): %w", scope, err)
		}
		return unixMilli(max(m, 0)), nil
	}
	recs, err := st.List(ctx, scope)
	if err != nil {
		return 0, fmt.Errorf("lease: reading the marks of scope %s (order scope): %w", scope, err)
	}
	var m unixMilli
	for _, r := range recs {
		if !r.Held && r.Value != value {
			m = max(m, unixMilli(r.Mark))
		}
	}
	return m, nil
}
