// Package sqlconn holds what flurry's SQL stores (lease/sqlstore and
// segment/sqlstore) share, one concern a file:
//
//   - url.go: the URL forms, parsed into a Config with a driver.Connector;
//   - driver.go: the drivers behind the Connector and the SQLite settings;
//   - engine.go: the engines and placeholder rewriting;
//   - classify.go: which engine errors are transient;
//   - retry.go: running a statement again after a transient error;
//   - schema.go: making a store's tables on first use;
//   - handle.go: the database side of a store, made by New or Open.
//
// The URL forms, documented for users in each store's package:
//
//	postgres://user[:pass]@host:5432/db?sslmode=disable    (also postgresql://)
//	postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write
//	mysql://user[:pass]@host:3306/db
//	sqlite:///absolute/path.db   or   sqlite:relative/path.db
//
// Every URL takes request_timeout=5s, the bound of a store call whose context
// has no deadline (see package bound). Errors carry the prefix the store passes
// (ParseOptions.Prefix, Conn.Prefix), and never show a password.
package sqlconn
