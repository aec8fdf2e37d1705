package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/redisgen"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/snowflake"
)

// apiError is an error with the HTTP status, Connect code and Retry-After (whole
// seconds, 0 for none) it is answered with.
type apiError struct {
	status int
	code   connect.Code
	retry  int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errNotFound(name string, s *Server) *apiError {
	return &apiError{status: 404, code: connect.CodeNotFound, msg: fmt.Sprintf("unknown namespace %q; this server has %s", clip(name), s.nameList())}
}

func errBadRequest(format string, a ...any) *apiError {
	return &apiError{status: 400, code: connect.CodeInvalidArgument, msg: fmt.Sprintf(format, a...)}
}

func errUnauthorized(name string) *apiError {
	return &apiError{status: 401, code: connect.CodeUnauthenticated, msg: fmt.Sprintf("namespace %s needs a token: send Authorization: Bearer <token>", name)}
}

// issueError classifies an error from a generator: every one is 503 (the server is
// fine, this namespace cannot issue now), with how long to wait before a retry.
func issueError(ns string, err error) *apiError {
	e := &apiError{status: 503, code: connect.CodeUnavailable, retry: 1}
	var gap time.Duration
	if cb, ok := errors.AsType[*snowflake.ClockBehindError](err); ok {
		gap = cb.Gap
	} else if rb, ok := errors.AsType[*redisgen.ClockBehindError](err); ok {
		gap = rb.Gap
	}
	if gap > 0 {
		e.retry = int((gap + time.Second - 1) / time.Second)
	}
	what := "cannot issue now"
	switch {
	case errors.Is(err, snowflake.ErrExhausted), errors.Is(err, redisgen.ErrExhausted), errors.Is(err, segment.ErrRangeExhausted):
		what, e.retry = "has run out of IDs", 3600
	case errors.Is(err, snowflake.ErrLeaseLost):
		what = "holds no valid lease on a node value (retry shortly; it resumes once the lease is renewed)"
	case errors.Is(err, snowflake.ErrClockBehind), errors.Is(err, redisgen.ErrClockBehind):
		what = "stands behind its clock's high-water mark (retry after Retry-After)"
	case errors.Is(err, segment.ErrUnavailable):
		what = "has no IDs buffered and no segment store answers"
	case errors.Is(err, snowflake.ErrClosed), errors.Is(err, segment.ErrClosed), errors.Is(err, redisgen.ErrClosed):
		what = "is shutting down"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		what = "did not issue before the request ended"
	}
	e.msg = fmt.Sprintf("namespace %s %s: %s", ns, what, oneLine(err.Error()))
	return e
}

func (e *apiError) connect() *connect.Error {
	ce := connect.NewError(e.code, errors.New(e.msg))
	if e.retry > 0 {
		ce.Meta().Set("Retry-After", strconv.Itoa(e.retry))
	}
	return ce
}

// clip shortens user input quoted in messages.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
