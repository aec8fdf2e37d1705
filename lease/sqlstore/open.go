package sqlstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flurryid/flurry/internal/sqlconn"
)

// prefix starts the package's errors.
const prefix = "lease/sqlstore"

// ParseURL reads a store URL into Options for Open, without connecting: the
// Dialect, a Connector for the engine's driver (pgx, go-sql-driver/mysql or
// modernc.org/sqlite) and the settings of the URL's query keys. See the package
// documentation for the URL forms and their keys. Errors never show the URL's
// password.
func ParseURL(rawURL string) (Options, error) {
	c, err := sqlconn.Parse(rawURL, sqlconn.ParseOptions{Prefix: prefix, Keys: []string{"max_conns"}})
	if err != nil {
		return Options{}, err
	}
	o := Options{Dialect: Dialect(c.Engine), Connector: c.Connector, Table: c.Table, RequestTimeout: c.Request, name: c.Redacted}
	if v, ok := c.Keys["max_conns"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 || n == 0 || n > 10000 {
			return Options{}, fmt.Errorf("%s: max_conns=%q: use the most connections to open, 1 to 10000, or -1 for no cap", prefix, v)
		}
		o.MaxConns = n
	}
	return o, nil
}

// Open connects with o.Connector, checks that the database answers, creates the
// lease table if it is missing (unless o.SkipCreate), and returns a store whose
// Close closes the connections.
func Open(ctx context.Context, o Options) (*Store, error) {
	return newStore(sqlconn.OpenHandle(ctx, o.conn(o.Dialect)))
}

// conn is what sqlconn needs to know of the store and its options.
func (o Options) conn(d Dialect) sqlconn.Conn {
	return sqlconn.Conn{Prefix: prefix, Engine: sqlconn.Engine(d), Connector: o.Connector, Name: o.name,
		Table: o.Table, DefaultTable: DefaultTable, RequestTimeout: o.RequestTimeout, SkipCreate: o.SkipCreate, MaxConns: o.MaxConns,
		Tables: func(table string) []sqlconn.Table {
			q := d.queries(table)
			return []sqlconn.Table{{Name: table, Create: q.create, Probe: q.probe, Added: []sqlconn.Column{q.epoch}}}
		}}
}
