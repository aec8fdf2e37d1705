package sqlstore

import (
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url     string
		opts    Options
		dialect Dialect
		table   string
	}{
		{"postgres://u:pw@db.example:6543/ids?sslmode=disable", Options{}, Postgres, DefaultTable},
		{"postgresql://u@h/db?table=leaf_alloc&application_name=flurry", Options{}, Postgres, "leaf_alloc"},
		{"mysql://root:pw@127.0.0.1/test?table=leaf_alloc", Options{Table: "leaf_alloc"}, MySQL, "leaf_alloc"},
		{"sqlite:///var/lib/flurry/segments.db", Options{}, SQLite, DefaultTable},
		{"sqlite:data/segments.db", Options{Table: "segs"}, SQLite, "segs"},
		{"sqlite:///x.db?table=" + strings.Repeat("t", 54), Options{}, SQLite, strings.Repeat("t", 54)},
	} {
		c, err := parseURL(tc.url, tc.opts)
		if err != nil {
			t.Errorf("parseURL(%s): %v", tc.url, err)
			continue
		}
		if Dialect(c.Engine) != tc.dialect || c.Table != tc.table {
			t.Errorf("parseURL(%s): dialect %v table %q; want %v %q", tc.url, Dialect(c.Engine), c.Table, tc.dialect, tc.table)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct {
		url  string
		opts Options
		want string // in the error
	}{
		{"oracle://u:secret@h/db", Options{}, "unknown scheme"},
		{"postgres://u:secret@h:port/db", Options{}, "not a URL"},
		{"postgres://u:secret@h/db?sslmod=disable", Options{}, "unknown key sslmod"},
		{"mysql://u:secret@h/db?tabel=leaf_alloc", Options{}, "unknown key tabel"},
		{"mysql://u:secret@h/db?table=leaf-alloc", Options{}, "table name"},
		{"mysql://u:secret@h/db?table=" + strings.Repeat("t", 55), Options{}, "1 to 54"},
		{"mysql://u:secret@h/db?table=a", Options{Table: "b"}, "disagree"},
		{"sqlite://relative/path.db", Options{}, "names host"},
		{"sqlite:///x.db", Options{BusyTimeout: -time.Second}, "negative"},
	} {
		_, err := parseURL(tc.url, tc.opts)
		if err == nil {
			t.Errorf("parseURL(%q) accepted", tc.url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "segment/sqlstore: ") || strings.Contains(msg, "secret") {
			t.Errorf("parseURL(%q): %q; want the package prefix and %q, without the password", tc.url, msg, tc.want)
		}
	}
}
