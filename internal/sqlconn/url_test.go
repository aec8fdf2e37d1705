package sqlconn

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		url    string
		opts   ParseOptions
		engine Engine
		table  string
		check  func(t *testing.T, c Config)
	}{
		{name: "postgres", url: "postgres://u:pw@db.example:6543/leases?sslmode=disable", engine: Postgres, table: "",
			check: func(t *testing.T, c Config) {
				if c.PG.Host != "db.example" || c.PG.Port != 6543 || c.PG.User != "u" || c.PG.Password != "pw" || c.PG.Database != "leases" || c.PG.TLSConfig != nil {
					t.Errorf("pgx config %+v", c.PG.Config)
				}
			}},
		{name: "postgresql and pgx keys", url: "postgresql://u@h/db?sslmode=disable&application_name=flurry&connect_timeout=3&search_path=s1&table=t_1", engine: Postgres, table: "t_1",
			check: func(t *testing.T, c Config) {
				if c.PG.RuntimeParams["application_name"] != "flurry" || c.PG.RuntimeParams["search_path"] != "s1" || c.PG.ConnectTimeout != 3*time.Second {
					t.Errorf("pgx config %+v", c.PG.Config)
				}
			}},
		{name: "mysql", url: "mysql://root:pw@127.0.0.1/test", engine: MySQL, table: "",
			check: func(t *testing.T, c Config) {
				m := c.MySQL
				if m.User != "root" || m.Passwd != "pw" || m.Addr != "127.0.0.1:3306" || m.DBName != "test" || !m.ParseTime || m.Loc != time.UTC || !m.ClientFoundRows {
					t.Errorf("mysql config %+v", m)
				}
			}},
		{name: "mysql ipv6 and keys", url: "mysql://u@[::1]:3307/d?tls=skip-verify&timeout=2s&table=x", engine: MySQL, table: "x",
			check: func(t *testing.T, c Config) {
				if c.MySQL.Addr != "[::1]:3307" || c.MySQL.TLSConfig != "skip-verify" || c.MySQL.Timeout != 2*time.Second {
					t.Errorf("mysql config %+v", c.MySQL)
				}
			}},
		{name: "sqlite absolute", url: "sqlite:///var/lib/flurry/leases.db", engine: SQLite, table: "",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "/var/lib/flurry/leases.db" || c.Busy != 5*time.Second {
					t.Errorf("sqlite path %q busy %v", c.SQLitePath, c.Busy)
				}
			}},
		{name: "sqlite localhost", url: "sqlite://localhost/tmp/a%20b.db?table=leases&busy_timeout=1s", engine: SQLite, table: "leases",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "/tmp/a b.db" || c.Busy != time.Second {
					t.Errorf("sqlite path %q busy %v", c.SQLitePath, c.Busy)
				}
			}},
		{name: "sqlite relative", url: "sqlite:data/leases.db", engine: SQLite, table: "",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "data/leases.db" {
					t.Errorf("sqlite path %q", c.SQLitePath)
				}
			}},
		{name: "postgres host list", url: "postgres://u:pw@[::1]:5432,db2,db3:5433/d?target_session_attrs=read-write&sslmode=disable", engine: Postgres, table: "",
			check: func(t *testing.T, c Config) {
				var hosts []string
				for _, f := range append([]*pgconn.FallbackConfig{{Host: c.PG.Host, Port: c.PG.Port}}, c.PG.Fallbacks...) {
					hosts = append(hosts, fmt.Sprintf("%s:%d", f.Host, f.Port))
				}
				if strings.Join(hosts, " ") != "::1:5432 db2:5432 db3:5433" || c.PG.ValidateConnect == nil ||
					c.PG.ConnectTimeout != time.Second || c.Redacted != "postgres://u:xxxxx@[::1]:5432,db2,db3:5433/d?target_session_attrs=read-write&sslmode=disable" {
					t.Errorf("hosts %v, validate %v, connect timeout %v, redacted %q", hosts, c.PG.ValidateConnect != nil, c.PG.ConnectTimeout, c.Redacted)
				}
			}},
		{name: "postgres default connect timeout", url: "postgres://u@h/d", engine: Postgres, table: "",
			check: func(t *testing.T, c Config) {
				if c.PG.ConnectTimeout != 5*time.Second || c.Call().Timeout != 0 {
					t.Errorf("connect timeout %v, request timeout %v", c.PG.ConnectTimeout, c.Call().Timeout)
				}
			}},
		{name: "request and busy timeouts", url: "sqlite:///x.db?request_timeout=3s&busy_timeout=2s", engine: SQLite, table: "",
			check: func(t *testing.T, c Config) {
				if c.Busy != 2*time.Second || c.Call().Timeout != 3*time.Second || c.Call().Store != "sqlite store sqlite:///x.db?request_timeout=3s&busy_timeout=2s" {
					t.Errorf("busy %v, call %+v", c.Busy, c.Call())
				}
			}},
		{name: "a key of the store's", url: "sqlite:///x.db?schema=leaf", opts: ParseOptions{Keys: []string{"schema"}}, engine: SQLite,
			check: func(t *testing.T, c Config) {
				if c.Keys["schema"] != "leaf" {
					t.Errorf("keys %v", c.Keys)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.url, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Connector == nil {
				t.Error("no Connector")
			}
			if c.Engine != tc.engine || c.Table != tc.table {
				t.Errorf("engine %v table %q; want %v %q", c.Engine, c.Table, tc.engine, tc.table)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseTableLength(t *testing.T) {
	long := strings.Repeat("t", 55)
	if _, err := Parse("sqlite:///x.db?table="+long, ParseOptions{MaxTableLen: 54}); err == nil || !strings.Contains(err.Error(), "1 to 54") {
		t.Errorf("a 55-byte table with MaxTableLen 54: %v", err)
	}
	if _, err := Parse("sqlite:///x.db?table="+long, ParseOptions{}); err != nil {
		t.Errorf("a 55-byte table: %v", err)
	}
	if c, err := Parse("sqlite:///x.db", ParseOptions{}); err != nil || c.Table != "" {
		t.Errorf("no table: %q, %v; want the store's default, left empty", c.Table, err)
	}
	if _, err := Parse("sqlite:///x.db?table=1t", ParseOptions{Prefix: "pkg"}); err == nil || !strings.HasPrefix(err.Error(), "pkg: ") {
		t.Errorf("a bad table, with a prefix: %v", err)
	}
}

func TestEngineName(t *testing.T) {
	for e, want := range map[Engine]string{Postgres: "postgres", MySQL: "mysql", SQLite: "sqlite", 0: "", 9: ""} {
		if got := e.Name(); got != want || e.Known() != (want != "") {
			t.Errorf("%d.Name() = %q; want %q", int(e), got, want)
		}
	}
}

func TestDollars(t *testing.T) {
	if got := Dollars("a = ? AND b = ? OR c = '' "); got != "a = $1 AND b = $2 OR c = '' " {
		t.Errorf("Dollars = %q", got)
	}
	a, b := "x = ?", "y = ?"
	Placeholders(MySQL, &a)
	Placeholders(Postgres, &b)
	if a != "x = ?" || b != "y = $1" {
		t.Errorf("Placeholders: %q %q", a, b)
	}
	if Engine(0).String() != "Dialect(0)" || SQLite.String() != "sqlite" {
		t.Errorf("String: %q %q", Engine(0), SQLite)
	}
}

func TestBackoff(t *testing.T) {
	for attempt := 1; attempt < 20; attempt++ {
		if d := Backoff().Pause(attempt); d <= 0 || d > 65*time.Millisecond {
			t.Errorf("Backoff().Pause(%d) = %v", attempt, d)
		}
	}
}

// FuzzParse: Parse never panics and never shows a password, host lists
// included.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"postgres://u:hunter2pw@h1:5432,h2:5433/db?target_session_attrs=read-write",
		"postgres://u:hunter2pw@[::1]:5432,[::1]:5433/db?sslmode=disable",
		"postgresql://u:hunter2pw@h1,h2/db?connect_timeout=2&request_timeout=1s",
		"mysql://root:hunter2pw@h1:3306,h2:3306/test",
		"sqlite:///x.db?busy_timeout=1s",
		"postgres://u:hunter2pw@h1:5432,,h2/db",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := Parse(raw, ParseOptions{})
		msg := c.Redacted
		if err != nil {
			msg = err.Error()
		}
		if u, perr := url.Parse(raw); perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(msg, ":"+pw+"@") {
				t.Fatalf("%q shows the password", msg)
			}
		}
		_, rest, ok := strings.Cut(raw, "://")
		authority, _, _ := strings.Cut(rest, "/")
		if ok && strings.Contains(authority, ":hunter2pw@") && strings.Contains(msg, ":hunter2pw@") {
			t.Fatalf("%q shows the password", msg)
		}
	})
}
