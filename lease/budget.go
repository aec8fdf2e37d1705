package lease

import "time"

// Defaults of a Session's timing (Options).
const (
	// DefaultBudget is the outage budget when neither Budget nor TTL is set: long
	// enough for an etcd leader election, a Redis Sentinel failover or a database
	// restart, short enough that a crashed holder's value comes back within about a
	// minute.
	DefaultBudget = time.Minute
	// DefaultWindow is the renewal interval when Window is not set.
	DefaultWindow = 2 * time.Second
)

// Bounds of a session's outage budget. The largest keeps the TTL it needs within
// MaxTTL.
const (
	MinBudget = 100 * time.Millisecond
	MaxBudget = 12 * time.Hour
)

// checkBudget reports whether budget is an outage budget from MinBudget to
// MaxBudget.
func checkBudget(budget time.Duration) error {
	if budget < MinBudget || budget > MaxBudget {
		return badConfig("lease: outage budget %v must be from %s to %s", budget, short(MinBudget), short(MaxBudget))
	}
	return nil
}

// TTLFor returns the TTL a session uses when Options.TTL is not set: the shortest
// whole number of seconds (at least MinTTL) whose fence, TTL minus its margin,
// covers budget and one renewal interval, so that the generator can issue through
// a whole budget after its last renewal without outliving its lease.
func TTLFor(budget, window time.Duration) time.Duration {
	if window == 0 {
		window = DefaultWindow
	}
	// The fence is TTL - (TTL/10 + 50 ms) = 0.9 TTL - 50 ms; the interval is at
	// most window.
	need := budget + window + 50*time.Millisecond
	ttl := (need*10 + 8) / 9
	ttl = (ttl + time.Second - 1).Truncate(time.Second)
	for ttl-fenceMargin(ttl)-renewEvery(ttl, window) < budget {
		ttl += time.Second // integer rounding in fenceMargin
	}
	return max(ttl, MinTTL)
}

// Timing is a session's timing, resolved from Options by ResolveTiming.
type Timing struct {
	// Budget, TTL and Window are Options' fields with their defaults applied.
	Budget, TTL, Window time.Duration
	// Every is the renewal interval: Window, or TTL/3 if that is shorter.
	Every time.Duration
	// Margin is how long before the lease could expire in the store the generator
	// stops: TTL/10 + 50 ms.
	Margin time.Duration
}

// StoreWritesPerSecond is how many renewals a session sends the store per second
// while it answers: one per interval.
func (t Timing) StoreWritesPerSecond() float64 { return float64(time.Second) / float64(t.Every) }

// ResolveTiming applies Options' defaults to budget, ttl and window (zero for
// unset) and checks them: each within its bounds, and a TTL whose fence covers the
// budget and one renewal interval. Its errors match ErrBadConfig and say what to
// change.
func ResolveTiming(budget, ttl, window time.Duration) (Timing, error) {
	if window == 0 {
		window = DefaultWindow
	}
	if err := checkWindow(window); err != nil {
		return Timing{}, err
	}
	if budget == 0 && ttl == 0 {
		budget = DefaultBudget
	}
	if budget != 0 {
		if err := checkBudget(budget); err != nil {
			return Timing{}, err
		}
	}
	if ttl == 0 {
		ttl = TTLFor(budget, window)
	}
	if err := checkTTL(ttl); err != nil {
		return Timing{}, err
	}
	t := Timing{Budget: budget, TTL: ttl, Window: window, Every: renewEvery(ttl, window), Margin: fenceMargin(ttl)}
	if budget == 0 {
		t.Budget = (ttl - t.Margin - t.Every).Truncate(time.Millisecond)
	} else if budget+t.Every > ttl-t.Margin {
		return Timing{}, badConfig("lease: an outage budget of %v needs a ttl of at least %v (the budget, one renewal interval of %v and the fence's margin); raise ttl, leave it out, or lower the budget",
			budget, TTLFor(budget, window), t.Every)
	}
	return t, nil
}

// fenceMargin is how long before a lease could expire in the store its generator
// stops: TTL/10 + 50 ms, for clock-rate error and pauses (docs/correctness.md).
func fenceMargin(ttl time.Duration) time.Duration { return ttl/10 + 50*time.Millisecond }

// renewEvery is a session's renewal interval: Window, or TTL/3 if that is shorter,
// so that a lease is renewed several times within its TTL.
func renewEvery(ttl, window time.Duration) time.Duration { return min(ttl/3, window) }
