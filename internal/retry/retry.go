// Package retry paces the retries of flurry's stores and commands: a sleep that
// ends with its context, and a randomized exponential backoff ("full jitter"), so
// that callers that collided once spread out instead of colliding again in step.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Sleep waits for d or until ctx ends. It returns ctx's error when ctx ended first
// (or had ended already), and nil otherwise.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Backoff is a random pause that grows with the attempt. The zero Backoff does
// not pause.
type Backoff struct {
	// Min is added to every pause, so that no retry comes at once.
	Min time.Duration
	// First bounds the random part of the first retry's pause; each later retry
	// doubles the bound, up to Max.
	First time.Duration
	// Max caps the bound of the random part. Zero means First: no growth.
	Max time.Duration
}

// Pause returns the pause before retry number attempt (1 for the first retry):
// Min plus a uniformly random duration below min(First·2^(attempt-1), Max). The
// randomness is the point: rivals that lost to each other once wait different
// times, so they do not meet again at the same instant.
func (b Backoff) Pause(attempt int) time.Duration {
	limit := b.First
	for i := 1; i < attempt && limit < b.Max; i++ {
		limit *= 2
	}
	if b.Max > 0 {
		limit = min(limit, b.Max)
	}
	if limit <= 0 {
		return max(b.Min, 0)
	}
	return b.Min + rand.N(limit)
}

// Wait sleeps for Pause(attempt) or until ctx ends; see Sleep.
func (b Backoff) Wait(ctx context.Context, attempt int) error {
	return Sleep(ctx, b.Pause(attempt))
}

// Do runs fn until it succeeds, fails with an error retryable refuses, or has run
// attempts times in all, waiting b.Pause between runs. It returns fn's last error,
// or ctx's when ctx ends during a pause.
func Do(ctx context.Context, attempts int, b Backoff, retryable func(error) bool, fn func() error) error {
	for i := 1; ; i++ {
		err := fn()
		if err == nil || i >= attempts || !retryable(err) {
			return err
		}
		if err := b.Wait(ctx, i); err != nil {
			return err
		}
	}
}
