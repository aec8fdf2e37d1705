// Package bound gives a store call a time limit when its context has none, and
// turns running out of time into a one-line error that names the store.
//
// Every engine's client can wait forever: etcd's client dials lazily and waits for
// a connection that never comes, database/sql waits on a server that accepted the
// connection and never answers, and go-redis retries dials. A call made with a
// context without a deadline (a CLI command, a library user's context.Background)
// would then hang silently. The stores start each call with [Call.Start], which
// adds the store's request timeout to such contexts only: a caller that set its own
// deadline keeps it.
//
// A call that ran out of time also tells its store (Call.OnNoAnswer), which closes
// the connections that went silent with it ([Conns]), so that the next call, once
// the store is back, does not wait on a connection that will never answer.
package bound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// DefaultTimeout bounds a call whose context has no deadline when the store's
// request timeout is zero.
const DefaultTimeout = 5 * time.Second

// ErrNoAnswer is matched (with errors.Is) by the error of a store call that ran out
// of time: the store did not answer, or not in time.
var ErrNoAnswer = errors.New("the store did not answer in time")

// NoAnswerError reports a store call that ran out of time. It unwraps to the
// engine's error and matches ErrNoAnswer and context.DeadlineExceeded, whatever
// the engine's error was (go-redis, for one, reports an i/o timeout).
type NoAnswerError struct {
	Store  string        // the store, e.g. "etcd store etcd://127.0.0.1:2379/x"
	Within time.Duration // how long the call had
	Hint   string        // what to check, e.g. "is etcd running there?"
	Err    error         // the engine's error
}

func (e *NoAnswerError) Error() string {
	s := fmt.Sprintf("%s: no answer within %v", e.Store, e.Within)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	// A client that retries a refused connection until the deadline returns the
	// deadline's error; the refusal is what the user needs to know.
	if oe, ok := errors.AsType[*net.OpError](e.Err); ok && !oe.Timeout() && oe.Err != nil {
		s += "; last error: " + oe.Err.Error()
	}
	return s
}

// Unwrap returns the engine's error.
func (e *NoAnswerError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoAnswer) and errors.Is(err, context.DeadlineExceeded)
// true.
func (e *NoAnswerError) Is(target error) bool {
	return target == ErrNoAnswer || target == context.DeadlineExceeded
}

// Call describes the calls of one store. The zero Call bounds calls by
// DefaultTimeout and names no store.
type Call struct {
	// Store names the store in messages, its URL without password: "etcd store
	// etcd://127.0.0.1:2379/x".
	Store string
	// Timeout bounds a call whose context has no deadline. Zero means
	// DefaultTimeout; negative means no bound.
	Timeout time.Duration
	// Hint ends the message, in parentheses: "is etcd running there?".
	Hint string
	// OnNoAnswer, when set, is called when a call runs out of time, with the time
	// the call started, before end returns. A store closes there the connections
	// that may never answer again (see Conns), so that its next call connects anew
	// instead of waiting on them.
	OnNoAnswer func(start time.Time)
}

// Start returns the context a call runs with and a function the call defers with a
// pointer to its error. When ctx has no deadline, the returned context has one,
// c.Timeout away. end releases the context and, when the call failed because a
// deadline passed (its own or ctx's), replaces the error with a *NoAnswerError
// that wraps it and calls c.OnNoAnswer; an error after ctx was cancelled is left
// as it is.
func (c Call) Start(ctx context.Context) (_ context.Context, end func(*error)) {
	within := time.Duration(0)
	if d, ok := ctx.Deadline(); ok {
		within = time.Until(d)
	}
	return c.start(ctx, within)
}

// start is Start with the bound the message names: within, when ctx has a
// deadline, else c.Timeout.
func (c Call) start(ctx context.Context, within time.Duration) (_ context.Context, end func(*error)) {
	began := time.Now()
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		within = 0
		if t := c.timeout(); t > 0 {
			within = t
			ctx, cancel = context.WithTimeout(ctx, t)
		}
	}
	return ctx, func(errp *error) {
		if *errp != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(*errp, ErrNoAnswer) {
			*errp = &NoAnswerError{Store: c.Store, Within: round(within), Hint: c.Hint, Err: *errp}
			if c.OnNoAnswer != nil {
				c.OnNoAnswer(began)
			}
		}
		cancel()
	}
}

// Dial is Start for connecting: the context's deadline is at most d away, even when
// ctx has a later one. d <= 0 means DefaultTimeout.
func (c Call) Dial(ctx context.Context, d time.Duration) (context.Context, func(*error)) {
	if d <= 0 {
		d = DefaultTimeout
	}
	// The message names d itself, not the time left when the deadline is read
	// (999ms for a 1s dial on a busy machine), unless ctx's own deadline is
	// sooner.
	within := d
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		within = time.Until(dl)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	ctx, end := c.start(ctx, within)
	return ctx, func(errp *error) {
		end(errp)
		cancel()
	}
}

func (c Call) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// round makes a duration readable: whole milliseconds, or whole seconds from 10s.
func round(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}
