package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/server/internal/strategy"
	"github.com/flurryid/flurry/snowflake"
)

// apiError is an error with the HTTP status, Connect code and Retry-After (whole
// seconds, 0 for none) it is answered with. Its message is shown to the caller,
// so it never carries a store's error text (addresses, user and database names,
// tags, scopes, URLs): those go to the server's log.
type apiError struct {
	status int
	code   connect.Code
	retry  int
	auth   authResult // for 401: a missing or a wrong token
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// errNotFound names the namespaces an anonymous caller may use; those with tokens
// are not listed.
func (s *Server) errNotFound(name string) *apiError {
	msg := fmt.Sprintf("unknown namespace %q", clip(name))
	if l := s.nameList(); l != "" {
		msg += "; this server has " + l
	}
	return &apiError{status: 404, code: connect.CodeNotFound, msg: msg}
}

func errBadRequest(format string, a ...any) *apiError {
	return &apiError{status: 400, code: connect.CodeInvalidArgument, msg: fmt.Sprintf(format, a...)}
}

// errToken is the 401 of a request without a valid token for what (a
// namespace, or "this route" for the admin token): missing and wrong tokens get
// different messages (and WWW-Authenticate error="invalid_token" for a wrong one).
func errToken(what string, res authResult) *apiError {
	e := &apiError{status: 401, code: connect.CodeUnauthenticated, auth: res}
	if res == authWrong {
		e.msg = what + ": the token sent is not valid here; check it (Authorization: Bearer <token>)"
	} else {
		e.msg = what + " needs a token: send Authorization: Bearer <token>"
	}
	return e
}

// errRate is the 429 of a token over limits.token_rate.
func errRate(wait time.Duration) *apiError {
	return &apiError{status: 429, code: connect.CodeResourceExhausted, retry: max(1, int((wait+time.Second-1)/time.Second)),
		msg: "this token's request rate (limits.token_rate) is used up: retry after Retry-After"}
}

// errBusy is the 503 of a request that does not fit the IDs budget now.
func errBusy() *apiError {
	return &apiError{status: 503, code: connect.CodeUnavailable, retry: 1,
		msg: "the server holds as many IDs in flight as it may (limits.max_ids_in_flight): retry after Retry-After, or ask for fewer"}
}

// issueError classifies an error from a generator: every one is 503 (the server is
// fine, this namespace cannot issue now), with how long to wait before a retry.
// The generator's own text, which may name a store, goes to the log.
func (s *Server) issueError(ns *namespace, err error) *apiError {
	e := &apiError{status: 503, code: connect.CodeUnavailable, retry: 1}
	var gap time.Duration
	var rc strategy.Class
	if ns.extClass != nil {
		rc = ns.extClass(err)
	}
	if cb, ok := errors.AsType[*snowflake.ClockBehindError](err); ok {
		gap = cb.Gap
	} else if rc.Behind {
		gap = rc.Gap
	}
	if gap > 0 {
		e.retry = int((gap + time.Second - 1) / time.Second)
	}
	what := "cannot issue now (the reason is in the server's log)"
	switch {
	case errors.Is(err, snowflake.ErrExhausted), rc.Exhausted, errors.Is(err, segment.ErrExhausted):
		what, e.retry = "has run out of IDs", 3600
	case errors.Is(err, lease.ErrJournal):
		what = journalWhat(err)
	case errors.Is(err, lease.ErrLost):
		what = "holds no valid lease on a node value (retry shortly; it resumes once the lease is renewed)"
	case errors.Is(err, snowflake.ErrClockBehind), rc.Behind:
		what = "stands behind its clock's high-water mark (retry after Retry-After)"
		if gap > 0 {
			what = fmt.Sprintf("stands behind its clock's high-water mark by %v (retry after Retry-After)", gap.Round(time.Millisecond))
		}
	case errors.Is(err, segment.ErrUnavailable):
		what = "has no IDs buffered and no segment store answers"
	case errors.Is(err, snowflake.ErrClosed), errors.Is(err, segment.ErrClosed), rc.Closed:
		what = "is shutting down"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		what = "did not issue before the request ended"
	}
	s.logIssue(ns, err)
	e.msg = fmt.Sprintf("namespace %s %s", ns.name, what)
	return e
}

// journalWhat says why a namespace whose lease journal cannot be written refuses,
// and what to do: the file system's error by its system name only (no path).
func journalWhat(err error) string {
	cause := "the reason is in the server's log"
	fix := "check the disk of the server's data directory"
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		cause = errno.Error()
		if errno == syscall.ENOSPC || errno == syscall.EDQUOT {
			fix = "free disk space on the server (its data directory)"
		}
	}
	return fmt.Sprintf("cannot issue: flurry cannot write its lease journal (%s); %s: it resumes by itself once a write succeeds", cause, fix)
}

// logIssue logs a generator's error in full, at most once a second per
// namespace: a flood of failing requests must not flood the log.
func (s *Server) logIssue(ns *namespace, err error) {
	now := time.Now().UnixNano()
	last := ns.lastLog.Load()
	if now-last < int64(time.Second) || !ns.lastLog.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn("a request was refused: the namespace cannot issue", "namespace", ns.name, "err", err)
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
