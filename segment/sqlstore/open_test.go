package sqlstore

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url     string
		dialect Dialect
		table   string
		schema  string
	}{
		{"postgres://u:pw@db.example:6543/ids?sslmode=disable", Postgres, "", SchemaFlurry},
		{"postgresql://u@h/db?table=leaf_alloc&application_name=flurry", Postgres, "leaf_alloc", SchemaFlurry},
		{"mysql://root:pw@127.0.0.1/test?table=leaf_alloc&schema=leaf", MySQL, "leaf_alloc", SchemaLeaf},
		{"sqlite:///var/lib/flurry/segments.db", SQLite, "", SchemaFlurry},
		{"sqlite:data/segments.db?table=tiny_id_info", SQLite, "tiny_id_info", SchemaTinyID},
		{"sqlite:///x.db?table=" + strings.Repeat("t", 54), SQLite, strings.Repeat("t", 54), SchemaFlurry},
	} {
		o, err := ParseURL(tc.url)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", tc.url, err)
			continue
		}
		schema, err := o.schema()
		if o.Dialect != tc.dialect || o.Table != tc.table || schema != tc.schema || err != nil || o.Connector == nil {
			t.Errorf("ParseURL(%s): dialect %v table %q schema %q (%v), connector %v; want %v %q %q", tc.url, o.Dialect, o.Table, schema, err, o.Connector != nil, tc.dialect, tc.table, tc.schema)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // in the error
	}{
		{"oracle://u:secret@h/db", "unknown scheme"},
		{"postgres://u:secret@h:port/db", "not a URL"},
		{"postgres://u:secret@h/db?sslmod=disable", "unknown key sslmod"},
		{"mysql://u:secret@h/db?tabel=leaf_alloc", "unknown key tabel"},
		{"mysql://u:secret@h/db?table=leaf-alloc", "table name"},
		{"mysql://u:secret@h/db?table=" + strings.Repeat("t", 55), "1 to 54"},
		{"mysql://u:secret@h/db?schema=other", "schema=other"},
		{"mysql://u:secret@h/db?schema=leaf&schema=tinyid", "2 times"},
		{"sqlite://relative/path.db", "names host"},
		{"sqlite:///x.db?busy_timeout=-1s", "busy_timeout=-1s"},
	} {
		_, err := ParseURL(tc.url)
		if err == nil {
			t.Errorf("ParseURL(%q) accepted", tc.url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "segment/sqlstore: ") || strings.Contains(msg, "secret") {
			t.Errorf("ParseURL(%q): %q; want the package prefix and %q, without the password", tc.url, msg, tc.want)
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

// openAny is ParseURL and OpenAny.
func openAny(ctx context.Context, rawURL string) (segment.Store, error) {
	o, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return OpenAny(ctx, o)
}

func TestOpenRefusesOtherSchemas(t *testing.T) {
	o, err := ParseURL("sqlite:///x.db?schema=leaf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "OpenAny") {
		t.Errorf("Open with schema=leaf: %v", err)
	}
}
