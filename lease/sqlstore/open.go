package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
)

// Open connects to the database a URL names, creates the lease table if it is
// missing, and returns a store whose Close closes the connections. See the package
// documentation for the URL forms and their query keys. Errors never show the URL's
// password.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	c, err := parseURL(rawURL, opts)
	if err != nil {
		return nil, err
	}
	db, err := c.openDB()
	if err != nil {
		return nil, err
	}
	opts.Table = c.table
	s, err := New(db, c.dialect, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("lease/sqlstore: connect to %s: %w", c.redacted, err)
	}
	if err := s.ensure(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (opening %s)", err, c.redacted)
	}
	return s, nil
}

// config is a parsed URL.
type config struct {
	dialect  Dialect
	table    string
	redacted string // the URL for messages

	pg         *pgx.ConnConfig // Postgres
	my         *mysql.Config   // MySQL
	sqlitePath string          // SQLite
	busy       time.Duration   // SQLite
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

func parseURL(rawURL string, opts Options) (config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only the reason.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return config{}, fmt.Errorf("lease/sqlstore: not a URL: %v", err)
	}
	c := config{redacted: u.Redacted()}
	fail := func(format string, args ...any) (config, error) {
		return config{}, fmt.Errorf("lease/sqlstore: %s: %s", c.redacted, fmt.Sprintf(format, args...))
	}
	values, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fail("bad query: %v", err)
	}
	q := &query{v: values}
	c.table = q.take("table")
	switch {
	case c.table == "":
		c.table = opts.Table
	case opts.Table != "" && opts.Table != c.table:
		return fail("table=%s in the URL and Options.Table %q disagree", c.table, opts.Table)
	}
	if c.table == "" {
		c.table = DefaultTable
	}
	if err := checkTable(c.table); err != nil {
		return config{}, fmt.Errorf("%w (in %s)", err, c.redacted)
	}

	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		c.dialect = Postgres
		pass := url.Values{}
		for _, k := range pgKeys() {
			if v := q.take(k); v != "" {
				pass.Set(k, v)
			}
		}
		if err := q.remaining(); err != nil {
			return fail("%v; PostgreSQL URLs take table, %s", err, strings.Join(pgKeys(), ", "))
		}
		v := *u
		v.RawQuery = pass.Encode()
		// pgx's own errors redact the password.
		c.pg, err = pgx.ParseConfig(v.String())
		if err != nil {
			return fail("%v", err)
		}
	case "mysql":
		c.dialect = MySQL
		tlsMode, timeout := q.take("tls"), q.take("timeout")
		if err := q.remaining(); err != nil {
			return fail("%v; MySQL URLs take table, tls, timeout", err)
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
		c.my = cfg
	case "sqlite":
		c.dialect = SQLite
		if err := q.remaining(); err != nil {
			return fail("%v; SQLite URLs take table", err)
		}
		switch {
		case u.Opaque != "":
			c.sqlitePath, err = url.PathUnescape(u.Opaque)
			if err != nil {
				return fail("bad path: %v", err)
			}
		case u.Host != "" && u.Host != "localhost":
			return fail("names host %q; write sqlite:///absolute/path.db, or sqlite:relative/path.db", u.Host)
		default:
			c.sqlitePath = u.Path
		}
		switch {
		case c.sqlitePath == "" || c.sqlitePath == "/":
			return fail("no file; write sqlite:///absolute/path.db, or sqlite:relative/path.db")
		case strings.Contains(c.sqlitePath, ":memory:") || strings.HasPrefix(c.sqlitePath, "file:"):
			return fail("name a file: an in-memory database is not shared by the store's connections or by processes")
		case strings.ContainsAny(c.sqlitePath, "?#"):
			return fail("the file name must not contain ? or #")
		}
		c.busy = opts.BusyTimeout
		if c.busy < 0 {
			return fail("Options.BusyTimeout %v is negative", c.busy)
		}
		if c.busy == 0 {
			c.busy = 5 * time.Second
		}
	case "":
		return fail("no scheme; use postgres://, mysql:// or sqlite://")
	default:
		return fail("unknown scheme %q; use postgres://, postgresql://, mysql:// or sqlite://", u.Scheme)
	}
	return c, nil
}

// openDB makes the *sql.DB, without connecting.
func (c config) openDB() (*sql.DB, error) {
	switch c.dialect {
	case Postgres:
		return stdlib.OpenDB(*c.pg), nil
	case MySQL:
		conn, err := mysql.NewConnector(c.my)
		if err != nil {
			return nil, fmt.Errorf("lease/sqlstore: %s: %v", c.redacted, err)
		}
		return sql.OpenDB(conn), nil
	default:
		// WAL lets readers run beside the one writer; synchronous=FULL makes each
		// commit durable, since the marks must survive a power loss; the busy timeout
		// makes a writer wait for another process's write instead of failing.
		dsn := c.sqlitePath + "?_pragma=busy_timeout(" + strconv.FormatInt(c.busy.Milliseconds(), 10) + ")" +
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
		conn, err := sqlite.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("lease/sqlstore: %s: %v", c.redacted, err)
		}
		return sql.OpenDB(conn), nil
	}
}
