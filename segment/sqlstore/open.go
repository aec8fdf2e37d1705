package sqlstore

import (
	"context"
	"fmt"

	"github.com/flurryid/flurry/internal/sqlconn"
)

// Open connects to the database a URL names, creates the tables if they are
// missing, and returns a store whose Close closes the connections. See the package
// documentation for the URL forms and their query keys. Errors never show the URL's
// password.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	db, c, err := sqlconn.Open(ctx, rawURL, parseOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("segment/sqlstore: %w", err)
	}
	opts.Table = c.Table
	s, err := New(db, Dialect(c.Engine), opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	if err := s.ensure(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (opening %s)", err, c.Redacted)
	}
	return s, nil
}

func parseOptions(opts Options) sqlconn.ParseOptions {
	return sqlconn.ParseOptions{Table: opts.Table, DefaultTable: DefaultTable, MaxTableLen: maxTableLen, BusyTimeout: opts.BusyTimeout}
}

// parseURL parses a URL as Open does, without connecting.
func parseURL(rawURL string, opts Options) (sqlconn.Config, error) {
	c, err := sqlconn.Parse(rawURL, parseOptions(opts))
	if err != nil {
		return c, fmt.Errorf("segment/sqlstore: %w", err)
	}
	return c, nil
}
