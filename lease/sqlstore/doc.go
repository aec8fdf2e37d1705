// Package sqlstore keeps node-value leases in one SQL table, on PostgreSQL, MySQL or
// MariaDB, or SQLite.
//
// # Opening
//
// [ParseURL] reads a URL into [Options] for [Open], without connecting:
//
//	postgres://user[:pass]@host:5432/db?sslmode=disable    (also postgresql://), driver pgx
//	mysql://user[:pass]@host:3306/db                       MySQL 8 or MariaDB 10.3+, go-sql-driver/mysql
//	sqlite:///absolute/path/leases.db                      SQLite (pure Go, modernc.org/sqlite)
//	sqlite:relative/path/leases.db                         SQLite, relative to the working directory
//
// Every URL takes table=NAME (default flurry_leases; letters, digits and
// underscores, not starting with a digit, at most 63 characters). The PostgreSQL URL
// also takes sslmode, sslrootcert, sslcert, sslkey, sslsni, connect_timeout,
// application_name, target_session_attrs and search_path, passed to pgx; the MySQL URL
// takes tls (true, false, skip-verify, preferred) and timeout (a dial timeout such as
// 5s). Any other query key is an error, so a misspelt option fails instead of being
// ignored. Errors show the URL with its password replaced by "xxxxx".
//
// Every URL also takes request_timeout (such as 5s): the bound of a call whose
// context has no deadline, Open included ([Options].RequestTimeout; default 5s
// for PostgreSQL and MySQL, none for SQLite). A SQLite URL takes busy_timeout, how
// long a call waits for another process's write (default 5s). pgx's
// connect_timeout defaults to 5s, shared by the hosts of a host list:
// postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write tries h1, then
// h2, and keeps the first that accepts writes. MySQL URLs name one host. See
// docs/high-availability.md for what a failover of each engine can lose.
//
// A SQLite URL names a file, never a host: sqlite://name/x.db is refused, because it
// is ambiguous (write sqlite:///abs/x.db or sqlite:name/x.db). SQLite runs in WAL mode
// with synchronous=FULL and a busy timeout (busy_timeout=), so several
// processes on one machine can share the file; do not put it on a network file
// system.
//
// Options made by hand work too: Open takes any driver.Connector of the Dialect's
// engine. [New] wraps a *sql.DB the caller opened, for any driver of the three
// engines.
//
// # Schema
//
// One row per (scope, value) that was ever acquired. Times are Unix milliseconds by
// the database's clock: expiry is judged by the database, never by a client, so
// clients whose clocks disagree still agree on who holds what. The table is created
// if missing (unless [Options].SkipCreate):
//
//	-- PostgreSQL
//	CREATE TABLE IF NOT EXISTS flurry_leases (
//		scope      VARCHAR(200) NOT NULL,
//		value      BIGINT       NOT NULL,
//		owner      VARCHAR(200) NOT NULL DEFAULT '',
//		token      VARCHAR(64)  NOT NULL DEFAULT '',
//		expires_ms BIGINT       NOT NULL DEFAULT 0,
//		mark       BIGINT       NOT NULL DEFAULT 0,
//		updated_ms BIGINT       NOT NULL DEFAULT 0,
//		PRIMARY KEY (scope, value)
//	)
//
//	-- MySQL, MariaDB
//	CREATE TABLE IF NOT EXISTS flurry_leases (
//		scope      VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
//		value      BIGINT NOT NULL,
//		owner      VARCHAR(200) CHARACTER SET utf8mb4 NOT NULL DEFAULT '',
//		token      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
//		expires_ms BIGINT NOT NULL DEFAULT 0,
//		mark       BIGINT NOT NULL DEFAULT 0,
//		updated_ms BIGINT NOT NULL DEFAULT 0,
//		PRIMARY KEY (scope, value)
//	) ENGINE=InnoDB
//
//	-- SQLite
//	CREATE TABLE IF NOT EXISTS flurry_leases (
//		scope      TEXT    NOT NULL,
//		value      INTEGER NOT NULL,
//		owner      TEXT    NOT NULL DEFAULT '',
//		token      TEXT    NOT NULL DEFAULT '',
//		expires_ms INTEGER NOT NULL DEFAULT 0,
//		mark       INTEGER NOT NULL DEFAULT 0,
//		updated_ms INTEGER NOT NULL DEFAULT 0,
//		PRIMARY KEY (scope, value)
//	) WITHOUT ROWID
//
// A value is held when its token is not empty and expires_ms is after the database's
// now. Renew raises the mark; Release empties owner and token and sets the mark to
// the one the holder gives. Rows are never deleted, because the mark must outlive
// every lease. To read the table as people:
//
//	SELECT scope, value, owner, to_timestamp(expires_ms / 1000.0) AS expires,
//	       to_timestamp(mark / 1000.0) AS mark FROM flurry_leases ORDER BY scope, value;  -- PostgreSQL
//
// # How Acquire stays atomic
//
// Acquire looks for the best free value (the lowest mark, then the lowest value,
// where a value without a row has mark 0), then claims it with one guarded
// statement: an INSERT that does nothing if the row appeared meanwhile, or an UPDATE
// whose WHERE clause repeats the old token, the old mark and the "free" test. Every
// engine serializes writes to one row, so of several racing acquirers exactly one
// changes the row; the others see no row affected and look again. No transaction or
// isolation level is needed, so the same statements work on every engine and with
// any driver. Renew and Release are single UPDATEs guarded by the token and by the
// lease not having expired. Deadlocks, serialization failures and
// SQLite's SQLITE_BUSY are retried a few times with a short random backoff.
package sqlstore
