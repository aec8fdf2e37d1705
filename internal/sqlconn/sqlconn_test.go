package sqlconn

import (
	"strings"
	"testing"
	"time"
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
		{name: "postgres", url: "postgres://u:pw@db.example:6543/leases?sslmode=disable", engine: Postgres, table: "dflt",
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
		{name: "mysql", url: "mysql://root:pw@127.0.0.1/test", engine: MySQL, table: "dflt",
			check: func(t *testing.T, c Config) {
				m := c.MySQL
				if m.User != "root" || m.Passwd != "pw" || m.Addr != "127.0.0.1:3306" || m.DBName != "test" || !m.ParseTime || m.Loc != time.UTC || !m.ClientFoundRows {
					t.Errorf("mysql config %+v", m)
				}
			}},
		{name: "mysql ipv6 and keys", url: "mysql://u@[::1]:3307/d?tls=skip-verify&timeout=2s", opts: ParseOptions{Table: "x"}, engine: MySQL, table: "x",
			check: func(t *testing.T, c Config) {
				if c.MySQL.Addr != "[::1]:3307" || c.MySQL.TLSConfig != "skip-verify" || c.MySQL.Timeout != 2*time.Second {
					t.Errorf("mysql config %+v", c.MySQL)
				}
			}},
		{name: "sqlite absolute", url: "sqlite:///var/lib/flurry/leases.db", engine: SQLite, table: "dflt",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "/var/lib/flurry/leases.db" || c.Busy != 5*time.Second {
					t.Errorf("sqlite path %q busy %v", c.SQLitePath, c.Busy)
				}
			}},
		{name: "sqlite localhost", url: "sqlite://localhost/tmp/a%20b.db?table=leases", opts: ParseOptions{BusyTimeout: time.Second}, engine: SQLite, table: "leases",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "/tmp/a b.db" || c.Busy != time.Second {
					t.Errorf("sqlite path %q busy %v", c.SQLitePath, c.Busy)
				}
			}},
		{name: "sqlite relative", url: "sqlite:data/leases.db", engine: SQLite, table: "dflt",
			check: func(t *testing.T, c Config) {
				if c.SQLitePath != "data/leases.db" {
					t.Errorf("sqlite path %q", c.SQLitePath)
				}
			}},
		{name: "table in both, agreeing", url: "sqlite:///x.db?table=same", opts: ParseOptions{Table: "same"}, engine: SQLite, table: "same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.DefaultTable = "dflt"
			c, err := Parse(tc.url, tc.opts)
			if err != nil {
				t.Fatal(err)
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
	if _, err := Parse("sqlite:///x.db", ParseOptions{}); err == nil {
		t.Errorf("no table at all accepted")
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
}

func TestBackoff(t *testing.T) {
	for attempt := 1; attempt < 20; attempt++ {
		if d := Backoff(attempt); d <= 0 || d > 65*time.Millisecond {
			t.Errorf("Backoff(%d) = %v", attempt, d)
		}
	}
}
