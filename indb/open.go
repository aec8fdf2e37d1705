package indb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/flurryid/flurry/internal/sqlconn"
)

// Open connects to the database a URL names, in the forms of flurry's SQL lease
// stores (postgres://user:pass@host:5432/db?search_path=app, mysql://user:pass@host:3306/db),
// and checks that it answers. It returns the engine with it: Postgres, or MariaDB
// for a mysql:// URL. Errors never show the password.
func Open(ctx context.Context, rawURL string) (*sql.DB, Engine, string, error) {
	c, err := sqlconn.Parse(rawURL, sqlconn.ParseOptions{Prefix: "indb"})
	if err != nil {
		return nil, 0, "", err
	}
	var e Engine
	switch c.Engine {
	case sqlconn.Postgres:
		e = Postgres
	case sqlconn.MySQL:
		e = MariaDB
	default:
		return nil, 0, c.Redacted, fmt.Errorf("indb: %s: IDs can be made in PostgreSQL or MariaDB; use a postgres:// or mysql:// URL", c.Redacted)
	}
	db := sql.OpenDB(c.Connector)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, 0, c.Redacted, fmt.Errorf("indb: %s does not answer: %w", c.Redacted, err)
	}
	return db, e, c.Redacted, nil
}
