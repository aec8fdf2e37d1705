package sqlconn

import (
	"context"
	"time"

	"github.com/flurryid/flurry/internal/retry"
)

// Attempts is how many times Retry runs a function that keeps failing with
// transient errors.
const Attempts = 8

// Backoff is the pause between the attempts of Retry, and of a store's own loops
// that lost a race: random, up to 2, 4, 8 ... 64 ms, never less than 100µs.
func Backoff() retry.Backoff {
	return retry.Backoff{Min: 100 * time.Microsecond, First: 2 * time.Millisecond, Max: 64 * time.Millisecond}
}

// Retry runs fn again, up to Attempts times in all with a pause of Backoff, while
// it fails with a transient error. It returns fn's last error, or the context's.
func Retry(ctx context.Context, fn func() error) error {
	return retry.Do(ctx, Attempts, Backoff(), Transient, fn)
}
