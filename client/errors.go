package client

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with [errors.Is]. The errors the client returns wrap one
// of them, and for a server's answer also the *connect.Error it came from, so
// connect.CodeOf works too.
var (
	// ErrUnavailable is matched by the *Error that Next, NextText and Fetch return
	// when every server failed (refused, timed out, or answered UNAVAILABLE because
	// its namespace is exhausted, fenced or its store is down).
	ErrUnavailable = errors.New("client: no server could issue IDs")
	// ErrUnknownNamespace is returned when a server does not know the namespace
	// (NOT_FOUND, HTTP 404). It is not failed over: check the namespace's name and
	// the servers' configuration.
	ErrUnknownNamespace = errors.New("client: unknown namespace")
	// ErrUnauthenticated is returned when a server refuses the token
	// (UNAUTHENTICATED or PERMISSION_DENIED, HTTP 401/403). It is not failed over:
	// set Options.Token or Options.Tokens to a token the namespace accepts.
	ErrUnauthenticated = errors.New("client: token refused")
	// ErrInvalidArgument is returned when a server refuses the request itself
	// (INVALID_ARGUMENT or OUT_OF_RANGE, HTTP 400), such as a count above its
	// max_count. It is not failed over: lower Options.Batch or the count.
	ErrInvalidArgument = errors.New("client: request refused as invalid")
	// ErrWrongKind is returned by Next for a namespace that issues text IDs (uuidv7,
	// objectid) and by NextText for one that issues integers.
	ErrWrongKind = errors.New("client: namespace issues another kind of ID")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("client: closed")
)

// Error is returned when no server could issue IDs: every server was tried, in
// failover order, and each failed. It matches ErrUnavailable with [errors.Is], and
// Unwrap gives each server's cause.
type Error struct {
	// Namespace is the namespace asked for.
	Namespace string
	// Attempts holds one entry per server tried, in the order tried.
	Attempts []Attempt
	// Call is the call that failed when it issues no IDs: "Info" or "Decode";
	// empty for Next, NextText and Fetch.
	Call string
}

// withCall names the call in an *Error from a call that issues no IDs, so that
// its message does not speak of issuing.
func withCall(err error, call string) error {
	if e, ok := errors.AsType[*Error](err); ok {
		e.Call = call
	}
	return err
}

// Attempt is one server's failure within an *Error.
type Attempt struct {
	Server string // the server's URL
	Err    error  // what went wrong: a network error, a timeout, or the server's answer
}

// Error describes every attempt on one line, and what to do.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Call != "" {
		fmt.Fprintf(&b, "client: could not reach a server for %s of namespace %q", e.Call, e.Namespace)
	} else {
		fmt.Fprintf(&b, "client: no server could issue IDs of namespace %q", e.Namespace)
	}
	if len(e.Attempts) == 0 {
		b.WriteString(" (no server was tried)")
	}
	for i, a := range e.Attempts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", a.Server, a.Err)
	}
	b.WriteString("; check that the servers run and are reachable, then retry")
	return b.String()
}

// Is reports whether target is ErrUnavailable.
func (e *Error) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns each attempt's error.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Attempts))
	for i, a := range e.Attempts {
		errs[i] = a.Err
	}
	return errs
}
