package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/flurryid/flurry/internal/sqlconn"
)

// Open connects to the database a URL names, creates the lease table if it is
// missing, and returns a store whose Close closes the connections. See the package
// documentation for the URL forms and their query keys. Errors never show the URL's
// password.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	var s *Store
	err := sqlconn.OpenHandle(ctx, rawURL, parseOptions(opts), func(db *sql.DB, c sqlconn.Config) (*sqlconn.Handle, error) {
		opts.Table = c.Table
		var err error
		if s, err = newStore(db, Dialect(c.Engine), opts); err != nil {
			return nil, err
		}
		return s.h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("lease/sqlstore: %w", err)
	}
	return s, nil
}

func parseOptions(opts Options) sqlconn.ParseOptions {
	return sqlconn.ParseOptions{Table: opts.Table, DefaultTable: DefaultTable, BusyTimeout: opts.BusyTimeout, RequestTimeout: opts.RequestTimeout}
}

// parseURL parses a URL as Open does, without connecting.
func parseURL(rawURL string, opts Options) (sqlconn.Config, error) {
	c, err := sqlconn.Parse(rawURL, parseOptions(opts))
	if err != nil {
		return c, fmt.Errorf("lease/sqlstore: %w", err)
	}
	return c, nil
}
