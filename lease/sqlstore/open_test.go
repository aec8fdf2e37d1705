package sqlstore

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/storeurl"
)

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  string
		want string // in the error
	}{
		{"bad scheme", "oracle://u:secret@h/db", "unknown scheme"},
		{"no scheme", "/var/lib/leases.db", "no scheme"},
		{"unparsable", "postgres://u:secret@h:port/db", "not a URL"},
		{"unknown postgres key", "postgres://u:secret@h/db?sslmod=disable", "unknown key sslmod"},
		{"unknown mysql key", "mysql://u:secret@h/db?parseTime=true", "unknown key parseTime"},
		{"unknown sqlite key", "sqlite:///x.db?busy=1", "unknown key busy"},
		{"bad sqlite busy_timeout", "sqlite:///x.db?busy_timeout=1", "busy_timeout=1: use a positive duration"},
		{"bad request_timeout", "postgres://u@h/db?request_timeout=0s", "request_timeout=0s: use a positive duration"},
		{"mysql host list", "mysql://u@h1:3306,h2:3306/db", "names 2 hosts; MySQL URLs name one"},
		{"bad host list", "postgres://u:hunter2pw@h1:5432,:5433/db", "host 2 of the URL's host list: no host name"},
		{"key twice", "sqlite:///x.db?table=a&table=b", "2 times"},
		{"empty key", "mysql://u:secret@h/db?tls=", "no value"},
		{"bad table", "postgres://u:secret@h/db?table=leases-x", "table name"},
		{"table with a dot", "mysql://u:secret@h/db?table=s.t", "table name"},
		{"table starting with a digit", "sqlite:///x.db?table=1t", "table name"},
		{"mysql no db", "mysql://u:secret@h:3306", "database"},
		{"mysql no host", "mysql://u:secret@/db", "no host"},
		{"mysql bad tls", "mysql://u:secret@h/db?tls=maybe", "tls=maybe"},
		{"mysql bad timeout", "mysql://u:secret@h/db?timeout=soon", "timeout=soon"},
		{"sqlite host", "sqlite://relative/path.db", "names host"},
		{"sqlite no file", "sqlite://", "no file"},
		{"sqlite memory", "sqlite::memory:", "in-memory"},
		{"sqlite question mark", "sqlite:///a%3Fb.db", "must not contain"},
		{"sqlite negative busy", "sqlite:///x.db?busy_timeout=-1s", "busy_timeout=-1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseURL(tc.url)
			if err == nil {
				t.Fatalf("ParseURL(%q) accepted", tc.url)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if !strings.HasPrefix(msg, "lease/sqlstore: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
			if strings.Contains(msg, "secret") {
				t.Errorf("error shows the password: %q", msg)
			}
		})
	}
}

// TestOpenRedacts checks the errors of a connection that fails.
func TestOpenRedacts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, u := range []string{
		"postgres://u:secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"mysql://u:secret@127.0.0.1:1/db?timeout=2s",
		"sqlite:///nonexistent-dir-for-flurry/leases.db",
	} {
		s, err := openURL(ctx, u, Options{})
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", u)
			continue
		}
		if strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "lease/sqlstore: ") {
			t.Errorf("Open: %v", err)
		}
	}
}

func TestDialectString(t *testing.T) {
	for d, want := range map[Dialect]string{Postgres: "postgres", MySQL: "mysql", SQLite: "sqlite", 0: "Dialect(0)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q; want %q", int(d), got, want)
		}
	}
}

// openURL is ParseURL and Open, with opts' Table, SkipCreate and RequestTimeout
// over the URL's.
func openURL(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	return storeurl.ParseOpen[*Store](ParseURL, func(ctx context.Context, o Options) (*Store, error) {
		o.Table, o.SkipCreate, o.RequestTimeout = cmp.Or(opts.Table, o.Table), opts.SkipCreate, cmp.Or(opts.RequestTimeout, o.RequestTimeout)
		return Open(ctx, o)
	})(ctx, rawURL)
}

func TestOpenNeedsAConnector(t *testing.T) {
	_, err := Open(context.Background(), Options{Dialect: SQLite})
	if err == nil || !strings.Contains(err.Error(), "ParseURL") || !strings.HasPrefix(err.Error(), "lease/sqlstore: ") {
		t.Errorf("Open without a Connector: %v", err)
	}
}
