// Package sqlstore keeps segment tags in SQL tables, on PostgreSQL, MySQL or
// MariaDB, or SQLite (the embedded default), in the form of Meituan Leaf's
// leaf_alloc table: a Leaf user points the store at the existing table and moves
// over without migrating data, and Leaf servers and flurry can even share the table
// during a rolling migration.
//
// # Opening
//
// [ParseURL] reads a URL into [Options] for [Open], without connecting:
//
//	postgres://user[:pass]@host:5432/db?sslmode=disable    (also postgresql://), driver pgx
//	mysql://user[:pass]@host:3306/db                       MySQL 8 or MariaDB 10.3+, go-sql-driver/mysql
//	sqlite:///absolute/path/segments.db                    SQLite (pure Go, modernc.org/sqlite)
//	sqlite:relative/path/segments.db                       SQLite, relative to the working directory
//
// Every URL takes table=NAME (default flurry_segment; letters, digits and
// underscores, not starting with a digit, at most 54 characters); table=leaf_alloc
// serves a Leaf table. The PostgreSQL URL also takes sslmode, sslrootcert, sslcert,
// sslkey, sslsni, connect_timeout, application_name, target_session_attrs and
// search_path, passed to pgx; the MySQL URL takes tls (true, false, skip-verify,
// preferred) and timeout (a dial timeout such as 5s). Any other query key is an
// error, so a misspelt option fails instead of being ignored. Errors show the URL
// with its password replaced by "xxxxx".
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
// # Leaf's and tinyid's own tables
//
// [ParseURL] also reads a schema= key ([Options].Schema), which [OpenAny] (what
// segmenturl uses) follows:
//
//	?table=leaf_alloc&schema=leaf   [LeafTable]: Leaf's table with only SELECT and UPDATE on it;
//	                                no NAME_returned, so a range handed back survives only
//	                                as a rewind of max_id when nobody took a range since
//	?table=tiny_id_info             [TinyID]: didi tinyid's table with tinyid's meaning of a
//	(or schema=tinyid)              row (max_id the last ID handed out, id % delta ==
//	                                remainder, optimistic update on version)
//
// Both create nothing and can share their rows with running Leaf or tinyid servers.
//
// # Schema
//
// The tag table has exactly Leaf's leaf_alloc columns, with Leaf's meaning:
// biz_tag is the tag, step the configured step, description free text, update_time
// when the row last changed (by the database's clock), and max_id the next value to
// hand out: Leaf runs UPDATE leaf_alloc SET max_id = max_id + step and issues
// max_id-step to max_id-1. So a tag's [segment.Tag].Max, the highest value handed
// out, is max_id-1; a tag created with Max 0 has max_id 1, Leaf's default. Values
// handed back ([Store.Return]) wait in a second table, NAME_returned, which Leaf
// ignores. Both are created if missing (unless [Options].SkipCreate):
//
//	-- PostgreSQL
//	CREATE TABLE IF NOT EXISTS flurry_segment (
//		biz_tag     VARCHAR(128) NOT NULL DEFAULT '',
//		max_id      BIGINT       NOT NULL DEFAULT 1,
//		step        BIGINT       NOT NULL,
//		description VARCHAR(256) DEFAULT NULL,
//		update_time TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
//		PRIMARY KEY (biz_tag)
//	)
//	CREATE TABLE IF NOT EXISTS flurry_segment_returned (
//		biz_tag  VARCHAR(128) NOT NULL,
//		first_id BIGINT       NOT NULL,
//		last_id  BIGINT       NOT NULL,
//		PRIMARY KEY (biz_tag, first_id)
//	)
//
//	-- MySQL, MariaDB
//	CREATE TABLE IF NOT EXISTS flurry_segment (
//		biz_tag     VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
//		max_id      BIGINT NOT NULL DEFAULT '1',
//		step        BIGINT NOT NULL,
//		description VARCHAR(256) CHARACTER SET utf8mb4 DEFAULT NULL,
//		update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
//		PRIMARY KEY (biz_tag)
//	) ENGINE=InnoDB
//	CREATE TABLE IF NOT EXISTS flurry_segment_returned (
//		biz_tag  VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
//		first_id BIGINT NOT NULL,
//		last_id  BIGINT NOT NULL,
//		PRIMARY KEY (biz_tag, first_id)
//	) ENGINE=InnoDB
//
//	-- SQLite
//	CREATE TABLE IF NOT EXISTS flurry_segment (
//		biz_tag     TEXT    NOT NULL DEFAULT '',
//		max_id      INTEGER NOT NULL DEFAULT 1,
//		step        INTEGER NOT NULL,
//		description TEXT    DEFAULT NULL,
//		update_time TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
//		PRIMARY KEY (biz_tag)
//	) WITHOUT ROWID
//	CREATE TABLE IF NOT EXISTS flurry_segment_returned (
//		biz_tag  TEXT    NOT NULL,
//		first_id INTEGER NOT NULL,
//		last_id  INTEGER NOT NULL,
//		PRIMARY KEY (biz_tag, first_id)
//	) WITHOUT ROWID
//
// The only difference from Leaf's DDL is step: BIGINT, where Leaf has INT. A Leaf
// table works as it is; a step above 2^31-1 is refused for it with the ALTER TABLE
// that widens the column. biz_tag is case-sensitive ASCII on MySQL, because flurry
// tags are; a Leaf table keeps its collation.
//
// Max can reach 2^63-1, where max_id would have to be 2^63, past BIGINT. A tag
// whose last value 2^63-1 has been handed out keeps max_id = 2^63-1 (Leaf's next
// max_id + step then fails with an out-of-range error instead of wrapping) and a row
// (biz_tag, 0, 0) in the returned table, the top mark: no real block starts at 0.
// Take refuses with [segment.ErrRangeExhausted] what would pass 2^63-1 or the
// caller's limit; no value ever wraps.
//
// # How Take stays atomic
//
// Take runs one transaction: it locks the tag's row (SELECT ... FOR UPDATE on
// PostgreSQL and MySQL; on SQLite a write as the first statement, UPDATE ... SET
// max_id = max_id ... RETURNING, which takes the database's write lock, waiting in
// the busy handler, as BEGIN IMMEDIATE would), then deletes and hands out the lowest
// returned block above the floor, or else raises max_id past n fresh values
// computed in Go ([segment.FreshBlock]). Return, SetStep and Create lock the same row
// first, so no two transactions of this package wait for each other in a cycle:
// takers of one tag queue on its row, and a Leaf server's UPDATE queues with them.
// No statement takes a range or gap lock (the returned table is read without locks
// while the row lock is held and changed by primary key), so unlike a ticket server
// built on REPLACE INTO or INSERT ... ON DUPLICATE KEY UPDATE, many concurrent
// takers do not deadlock on MariaDB. Deadlocks, lock wait timeouts, serialization
// failures and SQLite's SQLITE_BUSY are still retried, the whole transaction up to 8
// times with a short random backoff, and then reported as such.
//
// A fresh Take costs five round trips on PostgreSQL and MySQL: BEGIN, the row lock,
// the look for a returned block, the UPDATE and COMMIT.
package sqlstore
