// Package sqlconn holds what flurry's SQL stores (lease/sqlstore and
// segment/sqlstore) share: their URL forms, opening a *sql.DB for PostgreSQL (pgx),
// MySQL or MariaDB (go-sql-driver/mysql) or SQLite (modernc.org/sqlite), making
// tables on first use, and recognizing and retrying the engines' transient errors.
//
// The URL forms, documented for users in each store's package:
//
//	postgres://user[:pass]@host:5432/db?sslmode=disable    (also postgresql://)
//	postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write
//	mysql://user[:pass]@host:3306/db
//	sqlite:///absolute/path.db   or   sqlite:relative/path.db
//
// Every URL takes request_timeout=5s, the bound of a store call whose context
// has no deadline (see package bound).
// Errors carry no package prefix; the stores add theirs. They never show a password.
package sqlconn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
)

// Engine names a SQL engine. Each store's exported Dialect has the same values.
type Engine int

// The engines. The zero Engine is none of them.
const (
	Postgres Engine = iota + 1 // PostgreSQL 10 or later
	MySQL                      // MySQL 8 or MariaDB 10.3 or later
	SQLite                     // SQLite 3.35 or later
)

// Name returns "postgres", "mysql" or "sqlite", or "" for an unknown engine.
func (e Engine) Name() string {
	switch e {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return ""
}

// Known reports whether e is one of the three engines.
func (e Engine) Known() bool { return e.Name() != "" }

// ParseOptions are the store options a URL is parsed against.
type ParseOptions struct {
	// Table is the store's Options.Table: empty, or the same as the URL's table=.
	Table string
	// DefaultTable is used when neither the URL nor Table names a table.
	DefaultTable string
	// MaxTableLen bounds the table name's length; zero means 63. A store that makes
	// tables named after its table with a suffix passes less.
	MaxTableLen int
	// BusyTimeout is how long a SQLite connection waits for another writer. Zero
	// means 5 seconds; negative is an error.
	BusyTimeout time.Duration
	// RequestTimeout bounds each store call whose context has no deadline. Zero
	// means 5s for PostgreSQL and MySQL and no bound for SQLite, whose calls wait
	// only for other writers, as long as the busy timeout; negative means no bound.
	RequestTimeout time.Duration
}

// Config is a parsed URL: the engine, the table and what Open needs to connect.
type Config struct {
	Engine   Engine
	Table    string
	Redacted string // the URL for messages, password replaced by "xxxxx"

	PG         *pgx.ConnConfig // PostgreSQL
	MySQL      *mysql.Config   // MySQL
	SQLitePath string          // SQLite
	Busy       time.Duration   // SQLite busy timeout
	Request    time.Duration   // the store's RequestTimeout, after the URL's request_timeout
}

// Call describes the calls of the store c names; see package bound.
func (c Config) Call() bound.Call {
	return call(c.Engine, c.Redacted, c.Request)
}

func call(e Engine, redacted string, d time.Duration) bound.Call {
	hint := map[Engine]string{Postgres: "is PostgreSQL running there?", MySQL: "is MySQL or MariaDB running there?",
		SQLite: "is another process holding the database?"}[e]
	if d == 0 && e == SQLite {
		d = -1
	}
	name := e.Name() + " store"
	if redacted != "" {
		name += " " + redacted
	}
	return bound.Call{Store: name, Timeout: d, Hint: hint}
}

// pgKeys returns the PostgreSQL URL keys passed on to pgx.
func pgKeys() []string {
	return []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni", "connect_timeout", "application_name", "target_session_attrs", "search_path"}
}

// query consumes URL query keys, go-redis style: each key is taken once and deleted,
// the first error is kept, and keys left over at the end are refused.
type query struct {
	v   url.Values
	err error
}

func (q *query) take(key string) string {
	vs, ok := q.v[key]
	if !ok {
		return ""
	}
	delete(q.v, key)
	if len(vs) != 1 && q.err == nil {
		q.err = fmt.Errorf("key %s is given %d times", key, len(vs))
	}
	if vs[len(vs)-1] == "" && q.err == nil {
		q.err = fmt.Errorf("key %s has no value", key)
	}
	return vs[len(vs)-1]
}

func (q *query) remaining() error {
	if q.err != nil || len(q.v) == 0 {
		return q.err
	}
	var left []string
	for k := range q.v {
		left = append(left, k)
	}
	sort.Strings(left)
	return fmt.Errorf("unknown key %s", strings.Join(left, ", "))
}

// Parse reads a store URL. Every URL takes table=NAME; PostgreSQL URLs also take the
// keys of pgKeys, passed to pgx; MySQL URLs take tls and timeout. Any other key is
// an error, so a misspelt option fails instead of being ignored.
func Parse(rawURL string, o ParseOptions) (Config, error) {
	// A host list (postgres://u@h1:5432,h2:5432/db) is taken out before url.Parse,
	// which refuses some lists libpq accepts; its errors never show the password.
	u, hosts, _, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("not a URL: %v", err)
	}
	if len(hosts) > 0 {
		u.Host = hosts.String()
	}
	c := Config{Redacted: u.Redacted(), Request: o.RequestTimeout}
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%s: %s", c.Redacted, fmt.Sprintf(format, args...))
	}
	values, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fail("bad query: %v", err)
	}
	q := &query{v: values}
	c.Table = q.take("table")
	if v := q.take("request_timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fail("request_timeout=%s: use a positive duration such as 5s", v)
		}
		c.Request = d
	}

	switch {
	case c.Table == "":
		c.Table = o.Table
	case o.Table != "" && o.Table != c.Table:
		return fail("table=%s in the URL and Options.Table %q disagree", c.Table, o.Table)
	}
	if c.Table == "" {
		c.Table = o.DefaultTable
	}
	if err := CheckTable(c.Table, o.MaxTableLen); err != nil {
		return Config{}, fmt.Errorf("%w (in %s)", err, c.Redacted)
	}

	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		c.Engine = Postgres
		pass := url.Values{}
		for _, k := range pgKeys() {
			if v := q.take(k); v != "" {
				pass.Set(k, v)
			}
		}
		if err := q.remaining(); err != nil {
			return fail("%v; PostgreSQL URLs take table, request_timeout, %s", err, strings.Join(pgKeys(), ", "))
		}
		if !pass.Has("connect_timeout") {
			// pgx has no connect timeout of its own. Its timeout applies to each
			// host in turn, so with a list the hosts share 5s: a first host that
			// hangs leaves time for the next.
			pass.Set("connect_timeout", strconv.Itoa(max(1, 5/max(len(hosts), 1))))
		}
		v := *u
		v.RawQuery = pass.Encode()
		// pgx's own errors redact the password.
		c.PG, err = pgx.ParseConfig(v.String())
		if err != nil {
			return fail("%v", err)
		}
	case "mysql":
		c.Engine = MySQL
		tlsMode, timeout := q.take("tls"), q.take("timeout")
		if err := q.remaining(); err != nil {
			return fail("%v; MySQL URLs take table, request_timeout, tls, timeout", err)
		}
		if len(hosts) > 1 {
			return fail("names %d hosts; MySQL URLs name one (put a proxy such as ProxySQL or MaxScale in front of a replicated cluster)", len(hosts))
		}
		cfg := mysql.NewConfig()
		cfg.Net = "tcp"
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
		if u.Hostname() == "" {
			return fail("no host; write mysql://user:pass@host:3306/db")
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Addr = net.JoinHostPort(u.Hostname(), port)
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
			return fail("name one database after the host: mysql://user:pass@host:3306/db")
		}
		switch strings.ToLower(tlsMode) {
		case "", "false":
		case "true", "skip-verify", "preferred":
			cfg.TLSConfig = strings.ToLower(tlsMode)
		default:
			return fail("tls=%s: use true, false, skip-verify or preferred", tlsMode)
		}
		cfg.Timeout = 10 * time.Second
		if timeout != "" {
			d, err := time.ParseDuration(timeout)
			if err != nil || d <= 0 {
				return fail("timeout=%s: use a positive duration such as 5s", timeout)
			}
			cfg.Timeout = d
		}
		cfg.ParseTime = true
		cfg.Loc = time.UTC
		cfg.InterpolateParams = true // one round trip per statement; the arguments are plain
		cfg.ClientFoundRows = true   // rows matched, as the other engines count
		c.MySQL = cfg
	case "sqlite":
		c.Engine = SQLite
		busy := q.take("busy_timeout")
		if err := q.remaining(); err != nil {
			return fail("%v; SQLite URLs take table, busy_timeout, request_timeout", err)
		}
		switch {
		case u.Opaque != "":
			c.SQLitePath, err = url.PathUnescape(u.Opaque)
			if err != nil {
				return fail("bad path: %v", err)
			}
		case u.Host != "" && u.Host != "localhost":
			return fail("names host %q; write sqlite:///absolute/path.db, or sqlite:relative/path.db", u.Host)
		default:
			c.SQLitePath = u.Path
		}
		switch {
		case c.SQLitePath == "" || c.SQLitePath == "/":
			return fail("no file; write sqlite:///absolute/path.db, or sqlite:relative/path.db")
		case strings.Contains(c.SQLitePath, ":memory:") || strings.HasPrefix(c.SQLitePath, "file:"):
			return fail("name a file: an in-memory database is not shared by the store's connections or by processes")
		case strings.ContainsAny(c.SQLitePath, "?#"):
			return fail("the file name must not contain ? or #")
		}
		c.Busy = o.BusyTimeout
		if c.Busy < 0 {
			return fail("Options.BusyTimeout %v is negative", c.Busy)
		}
		if busy != "" {
			d, err := time.ParseDuration(busy)
			if err != nil || d <= 0 {
				return fail("busy_timeout=%s: use a positive duration such as 5s", busy)
			}
			c.Busy = d
		}
		if c.Busy == 0 {
			c.Busy = 5 * time.Second
		}
	case "":
		return fail("no scheme; use postgres://, mysql:// or sqlite://")
	default:
		return fail("unknown scheme %q; use postgres://, postgresql://, mysql:// or sqlite://", u.Scheme)
	}
	return c, nil
}

// CheckTable accepts plain SQL identifiers that need no quoting in any engine:
// letters, digits and underscores, not starting with a digit, at most maxLen bytes
// (zero means 63).
func CheckTable(name string, maxLen int) error {
	if maxLen <= 0 {
		maxLen = 63
	}
	ok := name != "" && len(name) <= maxLen && !(name[0] >= '0' && name[0] <= '9')
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	if !ok {
		return fmt.Errorf("table name %q: use 1 to %d letters, digits and underscores, not starting with a digit", name, maxLen)
	}
	return nil
}

// DB makes the *sql.DB, without connecting.
func (c Config) DB() (*sql.DB, error) {
	switch c.Engine {
	case Postgres:
		return stdlib.OpenDB(*c.PG), nil
	case MySQL:
		conn, err := mysql.NewConnector(c.MySQL)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Redacted, err)
		}
		return sql.OpenDB(conn), nil
	case SQLite:
		// WAL lets readers run beside the one writer; synchronous=FULL makes each
		// commit durable, since what the stores keep must survive a power loss; the
		// busy timeout makes a writer wait for another process's write instead of
		// failing.
		dsn := c.SQLitePath + "?_pragma=busy_timeout(" + strconv.FormatInt(c.Busy.Milliseconds(), 10) + ")" +
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
		conn, err := sqlite.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Redacted, err)
		}
		return sql.OpenDB(conn), nil
	}
	return nil, fmt.Errorf("unknown engine %d", int(c.Engine))
}

// Open parses rawURL, makes its *sql.DB and checks that the database answers,
// within the request timeout when ctx has no deadline.
func Open(ctx context.Context, rawURL string, o ParseOptions) (*sql.DB, Config, error) {
	c, err := Parse(rawURL, o)
	if err != nil {
		return nil, c, err
	}
	db, err := c.DB()
	if err != nil {
		return nil, c, err
	}
	if err := ping(ctx, db, c); err != nil {
		db.Close()
		return nil, c, err
	}
	return db, c, nil
}

func ping(ctx context.Context, db *sql.DB, c Config) (err error) {
	ctx, end := c.Call().Start(ctx)
	defer end(&err)
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect to %s: %w", c.Redacted, err)
	}
	return nil
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
	ownsDB bool // Close closes DB
}

// NewHandle checks what a store's New is given: a database, a known engine, a table
// name (empty means o.DefaultTable, at most o.MaxTableLen long) and o.BusyTimeout.
// The caller fills in Schema.
func NewHandle(db *sql.DB, e Engine, o ParseOptions) (*Handle, error) {
	if db == nil {
		return nil, errors.New("New needs a *sql.DB")
	}
	if !e.Known() {
		return nil, fmt.Errorf("unknown dialect Dialect(%d); use Postgres, MySQL or SQLite", int(e))
	}
	table := o.Table
	if table == "" {
		table = o.DefaultTable
	}
	if err := CheckTable(table, o.MaxTableLen); err != nil {
		return nil, err
	}
	if o.BusyTimeout < 0 {
		return nil, fmt.Errorf("BusyTimeout %v is negative", o.BusyTimeout)
	}
	return &Handle{DB: db, Engine: e, Table: table, Call: call(e, "", o.RequestTimeout)}, nil
}

// OpenHandle opens the database rawURL names and passes it to newHandle, which
// makes the store and returns its Handle. The Handle then owns the database (its
// Close closes it), and its tables are made. On any failure the database is closed.
func OpenHandle(ctx context.Context, rawURL string, o ParseOptions, newHandle func(*sql.DB, Config) (*Handle, error)) error {
	db, c, err := Open(ctx, rawURL, o)
	if err != nil {
		return err
	}
	h, err := newHandle(db, c)
	if err != nil {
		db.Close()
		return err
	}
	h.ownsDB = true
	h.Call = c.Call()
	if err := h.ensure(ctx); err != nil {
		db.Close()
		return fmt.Errorf("%w (opening %s)", err, c.Redacted)
	}
	return nil
}

// Ensure makes the store's tables if needed, until it has succeeded once.
func (h *Handle) Ensure(ctx context.Context) error { return h.Schema.Ensure(ctx, h.DB) }

func (h *Handle) ensure(ctx context.Context) (err error) {
	ctx, end := h.Call.Start(ctx)
	defer end(&err)
	return h.Ensure(ctx)
}

// Close closes the database if OpenHandle opened it; a store made on the caller's
// *sql.DB leaves it open.
func (h *Handle) Close() error {
	if h.ownsDB {
		return h.DB.Close()
	}
	return nil
}

// A Table is one table a store keeps.
type Table struct {
	Name   string
	Create string // CREATE TABLE IF NOT EXISTS ...
	Probe  string // a query that fails unless the table has every column the store uses
}

// Schema makes a store's tables on first use, once per store. The zero Schema has
// no tables.
type Schema struct {
	Tables []Table
	// SkipCreate only probes: the tables must exist.
	SkipCreate bool

	mu    sync.Mutex // guards ready
	ready bool       // the tables are known to exist
}

// Ensure creates the tables that are missing and checks their columns, until it has
// succeeded once.
func (s *Schema) Ensure(ctx context.Context, db *sql.DB) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	for _, t := range s.Tables {
		if !s.SkipCreate {
			err := Retry(ctx, func() error {
				_, err := db.ExecContext(ctx, t.Create)
				for i := 0; i < 3 && err != nil && createRace(err); i++ {
					// Another session created the table at the same moment: look again.
					_, err = db.ExecContext(ctx, t.Create)
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("create table %s: %w", t.Name, err)
			}
		}
		if err := Retry(ctx, func() error {
			rows, err := db.QueryContext(ctx, t.Probe)
			if err != nil {
				return err
			}
			return rows.Close()
		}); err != nil {
			return fmt.Errorf("table %s is missing or lacks the documented columns: %w", t.Name, err)
		}
	}
	s.ready = true
	return nil
}

// createRace reports a CREATE TABLE IF NOT EXISTS error that a concurrent CREATE
// explains: two PostgreSQL sessions creating one table at once collide in the catalog.
func createRace(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")
}

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

// Attempts is how many times Retry runs a function that keeps failing with
// transient errors.
const Attempts = 8

// Retry runs fn again, up to Attempts times in all with a short random backoff,
// while it fails with a transient error. It returns fn's last error, or the
// context's.
func Retry(ctx context.Context, fn func() error) error {
	for i := 1; ; i++ {
		err := fn()
		if err == nil || i == Attempts || !Transient(err) {
			return err
		}
		if err := Sleep(ctx, Backoff(i)); err != nil {
			return err
		}
	}
}

// Backoff is a random pause that grows with the attempt: up to 2, 4, 8 ... 64 ms.
func Backoff(attempt int) time.Duration {
	limit := time.Millisecond << min(attempt, 6)
	return time.Duration(mathrand.Int64N(int64(limit))) + 100*time.Microsecond
}

// Sleep waits for d or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Dollars turns ? placeholders into PostgreSQL's $1, $2, ... The statements must
// have no ? inside string literals.
func Dollars(s string) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
