package sqlconn

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/jackc/pgx/v5/pgconn"
)

// Conn is what a SQL store knows about its database when New or Open makes it:
// the fields of the store's Options, and the store's own constants.
type Conn struct {
	// Prefix starts every error ("lease/sqlstore").
	Prefix string
	// Engine is the store's Dialect.
	Engine Engine
	// Connector opens the database for OpenHandle; NewHandle ignores it.
	Connector driver.Connector
	// Name names the database in messages, without a password (Config.Redacted);
	// empty means the engine's name alone.
	Name string
	// Table is the store's main table; empty means DefaultTable.
	Table, DefaultTable string
	// MaxTableLen bounds the table name's length; zero means 63.
	MaxTableLen int
	// RequestTimeout bounds each store call whose context has no deadline; see
	// package bound. Zero means 5s, or no bound for SQLite; negative means no bound.
	RequestTimeout time.Duration
	// SkipCreate only probes the tables; they must exist.
	SkipCreate bool
	// MaxConns caps the connections of the pool OpenHandle opens to PostgreSQL or
	// MySQL; zero means DefaultMaxConns, negative means no cap. NewHandle ignores
	// it: a caller's *sql.DB keeps its own settings.
	MaxConns int
	// Tables returns the tables the store keeps, given its main table's name.
	Tables func(table string) []Table
}

// Handle is the database side of a SQL store: the *sql.DB, its engine, the store's
// main table and the tables to make on first use.
type Handle struct {
	DB     *sql.DB
	Engine Engine
	Table  string
	Schema Schema
	// Call bounds and names each store call; see package bound.
	Call   bound.Call
	prefix string
	ownsDB bool // Close closes DB
}

// NewHandle checks what a store's New is given: a database, a known engine and a
// table name. It does not touch the database.
func NewHandle(db *sql.DB, c Conn) (*Handle, error) {
	h, err := newHandle(db, c)
	if err != nil {
		return nil, c.wrap(err)
	}
	return h, nil
}

func newHandle(db *sql.DB, c Conn) (*Handle, error) {
	if db == nil {
		return nil, errors.New("NewHandle needs a *sql.DB")
	}
	if !c.Engine.Known() {
		return nil, fmt.Errorf("unknown dialect Dialect(%d); use Postgres, MySQL or SQLite", int(c.Engine))
	}
	table := cmp.Or(c.Table, c.DefaultTable)
	if err := CheckTable(table, c.MaxTableLen); err != nil {
		return nil, err
	}
	h := &Handle{DB: db, Engine: c.Engine, Table: table, Call: call(c.Engine, c.Name, c.RequestTimeout), prefix: c.Prefix}
	h.Schema.SkipCreate = c.SkipCreate
	if c.Tables != nil {
		h.Schema.Tables = c.Tables(table)
	}
	return h, nil
}

// OpenHandle opens the database with c.Connector, checks that it answers and
// makes the store's tables, within the request timeout when ctx has no deadline.
// The Handle owns the database: its Close closes it. On any failure the database
// is closed. A PostgreSQL or MySQL call that gets no answer closes the pool's idle
// connections (dropIdle); a database a caller gives NewHandle keeps its own.
func OpenHandle(ctx context.Context, c Conn) (*Handle, error) {
	if c.Connector == nil {
		return nil, c.wrap(errors.New("Options.Connector is nil; make the Options with ParseURL, or set Dialect and Connector"))
	}
	db := sql.OpenDB(c.Connector)
	h, err := newHandle(db, c)
	if err == nil {
		h.ownsDB = true
		if c.Engine != SQLite {
			idle := maxIdle
			if n := MaxConns(c.MaxConns); n > 0 {
				db.SetMaxOpenConns(n)
				// Calls beyond the cap wait for a connection rather than open one;
				// keeping the capped pool's connections idle spares each burst of
				// renewals a connection setup per call.
				idle = n
			}
			db.SetMaxIdleConns(idle)
			h.Call.OnNoAnswer = func(time.Time) { dropIdle(db, idle) }
		}
		err = h.start(ctx)
	}
	if err != nil {
		db.Close()
		return nil, c.wrap(err)
	}
	return h, nil
}

// maxIdle is how many idle connections the pool of a database OpenHandle opened
// keeps without a cap: database/sql's default, set so that dropIdle can set it back.
const maxIdle = 2

// DefaultMaxConns returns the cap on a pool's connections that a zero
// Conn.MaxConns means: four per GOMAXPROCS, at most 16. A store's calls are short
// statements, so a few connections per core keep the database busy; a process of
// thousands of sessions must not open a connection per concurrent call (PostgreSQL
// allows 100 by default, MariaDB 151, and each is a server process or thread).
func DefaultMaxConns() int { return min(4*runtime.GOMAXPROCS(0), 16) }

// MaxConns returns the cap n stands for: DefaultMaxConns for zero, none (0) for
// a negative n.
func MaxConns(n int) int {
	switch {
	case n == 0:
		return DefaultMaxConns()
	case n < 0:
		return 0
	}
	return n
}

// dropIdle closes the idle connections of db, which OpenHandle opened, when a call
// got no answer. The drivers close the connection such a call waited on, but an
// idle one that went silent with it (behind a firewall or NAT that forgot it, a
// proxy whose backend went away) would fail the next call the same way, and the one
// after it the next: each would wait out its whole bound. A live database costs the
// next calls a connection each.
func dropIdle(db *sql.DB, idle int) {
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(idle)
}

// start checks that the database answers and makes the tables.
func (h *Handle) start(ctx context.Context) (err error) {
	ctx, end := h.Call.Start(ctx)
	defer end(&err)
	name := h.Call.Store
	if err := h.DB.PingContext(ctx); err != nil {
		if addr, ok := Unreachable(err); ok && !errors.Is(err, context.DeadlineExceeded) {
			return &UnreachableError{Engine: h.Engine, Addr: addr, Err: err}
		}
		if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
			// pgx reports every attempt (with and without TLS, each host) with
			// the same refusal; say it once.
			return &causeError{msg: "connect to " + name + ": " + pe.Error(), err: err}
		}
		return fmt.Errorf("connect to %s: %w", name, err)
	}
	if err := h.Schema.Ensure(ctx, h.DB); err != nil {
		return fmt.Errorf("%w (opening %s)", err, name)
	}
	return nil
}

// Ensure makes the store's tables if needed, until it has succeeded once. Its
// errors carry the store's prefix.
func (h *Handle) Ensure(ctx context.Context) error {
	if err := h.Schema.Ensure(ctx, h.DB); err != nil {
		return wrap(h.prefix, err)
	}
	return nil
}

// Close closes the database if OpenHandle opened it; a store made on the caller's
// *sql.DB leaves it open.
func (h *Handle) Close() error {
	if h.ownsDB {
		return h.DB.Close()
	}
	return nil
}

// causeError is err with a message of its own, shorter than err's.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

func (c Conn) wrap(err error) error { return wrap(c.Prefix, err) }

func wrap(prefix string, err error) error {
	if prefix == "" {
		return err
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// InTx runs fn in a transaction and commits, again from the start while it fails
// with a transient error (see Retry). It returns fn's error as it is. The caller
// makes the tables first (Ensure).
func (h *Handle) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return Retry(ctx, func() error {
		tx, err := h.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// QueryAll runs query and scans each row with scan, again from the start while it
// fails with a transient error (see Retry). The caller makes the tables first
// (Ensure).
func QueryAll[T any](ctx context.Context, h *Handle, query string, scan func(*sql.Rows) (T, error), args ...any) ([]T, error) {
	var out []T
	err := Retry(ctx, func() error {
		out = out[:0]
		rows, err := h.DB.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}
