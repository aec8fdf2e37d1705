package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
)

// prefix starts the package's errors.
const prefix = "segment/sqlstore"

// ParseURL reads a store URL into Options for Open (or OpenAny, which also takes
// the schema= key), without connecting: the Dialect, a Connector for the engine's
// driver (pgx, go-sql-driver/mysql or modernc.org/sqlite) and the settings of the
// URL's query keys. See the package documentation for the URL forms and their keys.
// Errors never show the URL's password.
func ParseURL(rawURL string) (Options, error) {
	c, err := sqlconn.Parse(rawURL, sqlconn.ParseOptions{Prefix: prefix, MaxTableLen: maxTableLen, Keys: []string{"schema"}})
	o := Options{Dialect: Dialect(c.Engine), Connector: c.Connector, Table: c.Table, Schema: c.Keys["schema"], RequestTimeout: c.Request, name: c.Redacted}
	if err == nil {
		_, err = o.schema()
	}
	return o, err
}

// Open connects with o.Connector, checks that the database answers, creates the
// tables if they are missing (unless o.SkipCreate), and returns a store whose Close
// closes the connections. It serves flurry's own schema; OpenAny serves the others.
func Open(ctx context.Context, o Options) (*Store, error) {
	schema, err := o.schema()
	if err != nil {
		return nil, err
	}
	if schema != SchemaFlurry {
		return nil, fmt.Errorf("%s: Options.Schema is %s; open it with OpenAny", prefix, schema)
	}
	return newStore(sqlconn.OpenHandle(ctx, o.conn(o.Dialect)))
}

// New returns a store on a database the caller opened, with any database/sql driver
// for the dialect's engine. It does not touch the database: the tables are created,
// or checked, with the context of the first call that needs them. Close leaves db
// open.
//
// Deadlocks, lock wait timeouts and busy errors are recognized, and retried, for the
// drivers ParseURL uses (pgx, go-sql-driver/mysql, modernc.org/sqlite); with other
// drivers they are returned as they are. With go-sql-driver/mysql, set
// InterpolateParams to save a round trip per statement.
func New(db *sql.DB, dialect Dialect, opts Options) (*Store, error) {
	return newStore(sqlconn.NewHandle(db, opts.conn(dialect)))
}

// newStore makes the store on a Handle from NewHandle or OpenHandle.
func newStore(h *sqlconn.Handle, err error) (*Store, error) {
	if err != nil {
		return nil, err
	}
	return &Store{h: h, q: Dialect(h.Engine).queries(h.Table, h.Table+"_returned")}, nil
}

// schema returns the schema o selects: Options.Schema, or tinyid's for its table.
func (o Options) schema() (string, error) {
	switch o.Schema {
	case "":
		if o.Table == TinyIDTable {
			return SchemaTinyID, nil
		}
		return SchemaFlurry, nil
	case SchemaFlurry, SchemaLeaf, SchemaTinyID:
		return o.Schema, nil
	}
	return "", fmt.Errorf("%s: schema=%s: use flurry, leaf or tinyid", prefix, o.Schema)
}

// conn is what sqlconn needs to know of the store and its options, for flurry's
// own two tables.
func (o Options) conn(d Dialect) sqlconn.Conn {
	return sqlconn.Conn{Prefix: prefix, Engine: sqlconn.Engine(d), Connector: o.Connector, Name: o.name,
		Table: o.Table, DefaultTable: DefaultTable, MaxTableLen: maxTableLen, RequestTimeout: o.RequestTimeout,
		SkipCreate: o.SkipCreate, Tables: func(table string) []sqlconn.Table {
			q := d.queries(table, table+"_returned")
			return []sqlconn.Table{
				{Name: table, Create: q.createTags, Probe: q.probeTags},
				{Name: table + "_returned", Create: q.createReturned, Probe: q.probeReturned},
			}
		}}
}

// probeOnly is o.conn for a schema of another server's table: it creates nothing and
// checks the table's columns with probe.
func (o Options) probeOnly(defaultTable string, probe func(d Dialect, table string) string) sqlconn.Conn {
	c := o.conn(o.Dialect)
	c.DefaultTable, c.MaxTableLen, c.SkipCreate = defaultTable, 0, true
	c.Tables = func(table string) []sqlconn.Table {
		return []sqlconn.Table{{Name: table, Probe: probe(o.Dialect, table)}}
	}
	return c
}

// OpenAny opens the store o's schema selects (ParseURL reads it from the schema=
// key):
//
//	schema=flurry (default)  Open: the tag table and NAME_returned, created if missing
//	schema=leaf              OpenLeafTable: leaf_alloc with only SELECT and UPDATE on it
//	schema=tinyid            OpenTinyID: tiny_id_info (also chosen by table=tiny_id_info)
func OpenAny(ctx context.Context, o Options) (segment.Store, error) {
	schema, err := o.schema()
	if err != nil {
		return nil, err
	}
	var s segment.Store
	switch schema {
	case SchemaLeaf:
		s, err = asStore(OpenLeafTable(ctx, o))
	case SchemaTinyID:
		s, err = asStore(OpenTinyID(ctx, o))
	default:
		s, err = asStore(Open(ctx, o))
	}
	return s, err
}

// asStore returns a nil interface, not a typed nil, with an error.
func asStore[S segment.Store](s S, err error) (segment.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
