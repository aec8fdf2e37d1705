package sqlconn

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Transient reports whether err is a deadlock, a serialization failure, a lock wait
// timeout or a busy database: the statement or transaction was rolled back and may be
// run again. It knows the errors of pgx, go-sql-driver/mysql and modernc.org/sqlite.
func Transient(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03"
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return me.Number == 1213 || me.Number == 1205
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		code := se.Code() & 0xff
		return code == 5 || code == 6 // SQLITE_BUSY, SQLITE_LOCKED
	}
	return false
}

// createRace reports a CREATE TABLE IF NOT EXISTS error that a concurrent CREATE
// explains: two PostgreSQL sessions creating one table at once collide in the catalog.
func createRace(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")
}

// Denied reports whether err is the database refusing a login, or a statement
// for want of a privilege.
func Denied(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "28P01" || pe.Code == "28000" || pe.Code == "42501"
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch me.Number {
		case 1044, 1045, 1142, 1143, 1227, 1370:
			return true
		}
		return false
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		switch se.Code() & 0xff {
		case 3, 8, 23: // SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH
			return true
		}
	}
	return false
}

// NoTable reports whether err says a table the statement names does not exist.
func NoTable(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "42P01"
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return me.Number == 1146
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		return strings.Contains(se.Error(), "no such table")
	}
	return false
}

// Unreachable reports whether err is a failure to reach the database: a
// connection refused, a name that does not resolve, no answer in time, a
// connection lost. addr is the address dialled, when the error tells it.
func Unreachable(err error) (addr string, ok bool) {
	if err == nil {
		return "", false
	}
	if ce, isConnect := errors.AsType[*pgconn.ConnectError](err); isConnect {
		if _, answered := errors.AsType[*pgconn.PgError](err); !answered && ce.Config != nil {
			return net.JoinHostPort(ce.Config.Host, strconv.Itoa(int(ce.Config.Port))), true
		}
	}
	if oe, isOp := errors.AsType[*net.OpError](err); isOp && oe.Op == "dial" {
		if oe.Addr != nil {
			return oe.Addr.String(), true
		}
		ok = true
	}
	if de, isDNS := errors.AsType[*net.DNSError](err); isDNS {
		return de.Name, true
	}
	if ok {
		return "", true
	}
	if errors.Is(err, bound.ErrNoAnswer) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return "", true
	}
	return "", false
}

// Reason is what an unreachable database's error comes down to, in a few words
// ("connection refused", "no such host", "no answer in time"), for messages that
// must not repeat a driver's whole text.
func Reason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		if de.IsNotFound {
			return "no such host"
		}
		return "the name does not resolve"
	}
	if errors.Is(err, bound.ErrNoAnswer) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "no answer in time"
	}
	return "the connection failed"
}

// UnreachableError is a database that could not be reached when a store opened
// it: one line that names the engine and the address, where a driver's own
// message may repeat each attempt's dial error.
type UnreachableError struct {
	Engine Engine
	Addr   string // host:port, or "" when the error did not tell
	Err    error  // the driver's error
}

func (e *UnreachableError) Error() string {
	at := ""
	if e.Addr != "" {
		at = " at " + e.Addr
	}
	return "cannot reach " + e.Engine.Title() + at + " (" + Reason(e.Err) + "); check that it runs and the URL's host and port"
}

// Unwrap returns the driver's error.
func (e *UnreachableError) Unwrap() error { return e.Err }
