package clock

import (
	"context"
	"time"
)

// Timeouter is implemented by clocks that do not advance at the rate of real time,
// such as a simulation's clock, so that deadlines measured on them are measured on
// them too. Real clocks need not implement it.
type Timeouter interface {
	// WithTimeout returns a copy of parent that is done when this clock reaches
	// Now()+d, or when parent is done, whichever is first.
	WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// WithTimeout returns a copy of parent that is done d after now on c. On a clock that
// runs at the rate of real time (System, Coarse, Offset, Fake) it is
// context.WithTimeout, so drivers see the deadline and set it on their sockets; a
// clock that implements Timeouter measures the timeout itself. Code whose store calls
// must be bounded uses it instead of context.WithTimeout so that a simulation, which
// owns all time, owns these deadlines too.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if t, ok := c.(Timeouter); ok {
		return t.WithTimeout(parent, d)
	}
	if o, ok := c.(Offset); ok {
		return WithTimeout(parent, o.Parent, d)
	}
	return context.WithTimeout(parent, d)
}
