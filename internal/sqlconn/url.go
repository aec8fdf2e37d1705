package sqlconn

import (
	"database/sql/driver"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// ParseOptions says what a store's URL may hold beyond the common keys.
type ParseOptions struct {
	// Prefix starts every error ("lease/sqlstore"); empty for none.
	Prefix string
	// MaxTableLen bounds the table name's length; zero means 63. A store that makes
	// tables named after its table with a suffix passes less.
	MaxTableLen int
	// Keys are more query keys the store takes; their values land in Config.Keys.
	Keys []string
}

// Config is a parsed URL: the engine, the table, the store's settings and the
// Connector that opens the database, without connecting.
type Config struct {
	Engine   Engine
	Table    string            // table=, or "" for the store's default
	Redacted string            // the URL for messages, passwords replaced by "xxxxx"
	Request  time.Duration     // request_timeout=, or zero
	Keys     map[string]string // the values of ParseOptions.Keys that were given

	PG         *pgx.ConnConfig // PostgreSQL
	MySQL      *mysql.Config   // MySQL
	SQLitePath string          // SQLite
	Busy       time.Duration   // SQLite busy timeout: busy_timeout=, or 5s

	// Connector opens connections to the database with the engine's driver.
	Connector driver.Connector
}

// Call describes the calls of the store c names; see package bound.
func (c Config) Call() bound.Call {
	return call(c.Engine, c.Redacted, c.Request)
}

func call(e Engine, name string, d time.Duration) bound.Call {
	hint := map[Engine]string{Postgres: "is PostgreSQL running there?", MySQL: "is MySQL or MariaDB running there?",
		SQLite: "is another process holding the database?"}[e]
	if d == 0 && e == SQLite {
		d = -1
	}
	store := e.Name() + " store"
	if name != "" {
		store += " " + name
	}
	return bound.Call{Store: store, Timeout: d, Hint: hint}
}

// pgKeys returns the PostgreSQL URL keys passed on to pgx.
func pgKeys() []string {
	return []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni", "connect_timeout", "application_name", "target_session_attrs", "search_path"}
}

// Parse reads a store URL. Every URL takes table=NAME and request_timeout; PostgreSQL
// URLs also take the keys of pgKeys, passed to pgx; MySQL URLs take tls and timeout;
// SQLite URLs take busy_timeout. Any other key, but those of o.Keys, is an error, so
// a misspelt option fails instead of being ignored.
func Parse(rawURL string, o ParseOptions) (Config, error) {
	c, err := parse(rawURL, o)
	if err != nil {
		if o.Prefix != "" {
			err = fmt.Errorf("%s: %w", o.Prefix, err)
		}
		return Config{}, err
	}
	return c, nil
}

func parse(rawURL string, o ParseOptions) (Config, error) {
	// A host list (postgres://u@h1:5432,h2:5432/db) is taken out before url.Parse,
	// which refuses some lists libpq accepts; its errors never show the password.
	u, hosts, redacted, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("not a URL: %v", err)
	}
	if len(hosts) > 0 {
		u.Host = hosts.String()
	}
	c := Config{Redacted: redacted}
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%s: %s", c.Redacted, fmt.Sprintf(format, args...))
	}
	q, err := storeurl.NewQuery(u.RawQuery)
	if err != nil {
		return fail("%v", err)
	}
	c.Table = q.Take("table")
	q.Duration("request_timeout", &c.Request)
	for _, k := range o.Keys {
		if v := q.Take(k); v != "" {
			if c.Keys == nil {
				c.Keys = map[string]string{}
			}
			c.Keys[k] = v
		}
	}
	if c.Table != "" {
		if err := CheckTable(c.Table, o.MaxTableLen); err != nil {
			return Config{}, fmt.Errorf("%w (in %s)", err, c.Redacted)
		}
	}
	common := strings.Join(append([]string{"table", "request_timeout"}, o.Keys...), ", ")

	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		c.Engine = Postgres
		pass := url.Values{}
		for _, k := range pgKeys() {
			if v := q.Take(k); v != "" {
				pass.Set(k, v)
			}
		}
		if err := q.Remaining(); err != nil {
			return fail("%v; PostgreSQL URLs take %s, %s", err, common, strings.Join(pgKeys(), ", "))
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
		tlsMode, timeout := q.Take("tls"), q.Take("timeout")
		if err := q.Remaining(); err != nil {
			return fail("%v; MySQL URLs take %s, tls, timeout", err, common)
		}
		if len(hosts) > 1 {
			return fail("names %d hosts; MySQL URLs name one (put a proxy such as ProxySQL or MaxScale in front of a replicated cluster)", len(hosts))
		}
		if c.MySQL, err = mysqlConfig(u, tlsMode, timeout); err != nil {
			return fail("%v", err)
		}
	case "sqlite":
		c.Engine = SQLite
		c.Busy = 5 * time.Second
		q.Duration("busy_timeout", &c.Busy)
		if err := q.Remaining(); err != nil {
			return fail("%v; SQLite URLs take %s, busy_timeout", err, common)
		}
		if c.SQLitePath, err = sqlitePath(u); err != nil {
			return fail("%v", err)
		}
	case "":
		return fail("no scheme; use postgres://, mysql:// or sqlite://")
	default:
		return fail("unknown scheme %q; use postgres://, postgresql://, mysql:// or sqlite://", u.Scheme)
	}
	if c.Connector, err = c.connector(); err != nil {
		return fail("%v", err)
	}
	return c, nil
}

// mysqlConfig reads mysql://user:pass@host:3306/db with the tls and timeout keys.
func mysqlConfig(u *url.URL, tlsMode, timeout string) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("no host; write mysql://user:pass@host:3306/db")
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, fmt.Errorf("name one database after the host: mysql://user:pass@host:3306/db")
	}
	switch strings.ToLower(tlsMode) {
	case "", "false":
	case "true", "skip-verify", "preferred":
		cfg.TLSConfig = strings.ToLower(tlsMode)
	default:
		return nil, fmt.Errorf("tls=%s: use true, false, skip-verify or preferred", tlsMode)
	}
	cfg.Timeout = 10 * time.Second
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout=%s: use a positive duration such as 5s", timeout)
		}
		cfg.Timeout = d
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true // one round trip per statement; the arguments are plain
	cfg.ClientFoundRows = true   // rows matched, as the other engines count
	return cfg, nil
}

// sqlitePath reads the file of sqlite:///absolute/path.db or sqlite:relative/path.db.
func sqlitePath(u *url.URL) (string, error) {
	var path string
	switch {
	case u.Opaque != "":
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", fmt.Errorf("bad path: %v", err)
		}
		path = p
	case u.Host != "" && u.Host != "localhost":
		return "", fmt.Errorf("names host %q; write sqlite:///absolute/path.db, or sqlite:relative/path.db", u.Host)
	default:
		path = u.Path
	}
	switch {
	case path == "" || path == "/":
		return "", fmt.Errorf("no file; write sqlite:///absolute/path.db, or sqlite:relative/path.db")
	case strings.Contains(path, ":memory:") || strings.HasPrefix(path, "file:"):
		return "", fmt.Errorf("name a file: an in-memory database is not shared by the store's connections or by processes")
	case strings.ContainsAny(path, "?#"):
		return "", fmt.Errorf("the file name must not contain ? or #")
	}
	return path, nil
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
		return fmt.Errorf("table name %q: use 1 to %d ASCII letters, digits and underscores, not starting with a digit", name, maxLen)
	}
	return nil
}
