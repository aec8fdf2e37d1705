package sqlstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Dialect names the SQL engine behind a *sql.DB given to [New].
type Dialect int

// The engines sqlstore speaks. The zero Dialect is none of them.
const (
	// Postgres is PostgreSQL 10 or later.
	Postgres Dialect = iota + 1
	// MySQL is MySQL 8 or MariaDB 10.3 or later.
	MySQL
	// SQLite is SQLite 3.24 or later.
	SQLite
)

// String returns the dialect's name: "postgres", "mysql" or "sqlite".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// nowMs is the SQL expression for the database's clock in Unix milliseconds.
func (d Dialect) nowMs() string {
	switch d {
	case Postgres:
		// clock_timestamp, not now(): a statement that waited for a row lock judges
		// expiry at the time it runs, not when its transaction began.
		return "FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
	case MySQL:
		// UTC_TIMESTAMP and TIMESTAMPDIFF on DATETIMEs do not depend on the session's
		// time zone, so a daylight-saving hour cannot shift the result.
		return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
	default:
		// 'now' is fixed for the length of one statement.
		return "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
	}
}

func (d Dialect) ddl(table string) string {
	switch d {
	case Postgres:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	scope      VARCHAR(200) NOT NULL,
	value      BIGINT       NOT NULL,
	owner      VARCHAR(200) NOT NULL DEFAULT '',
	token      VARCHAR(64)  NOT NULL DEFAULT '',
	expires_ms BIGINT       NOT NULL DEFAULT 0,
	mark       BIGINT       NOT NULL DEFAULT 0,
	updated_ms BIGINT       NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, value)
)`
	case MySQL:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	scope      VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	value      BIGINT NOT NULL,
	owner      VARCHAR(200) CHARACTER SET utf8mb4 NOT NULL DEFAULT '',
	token      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
	expires_ms BIGINT NOT NULL DEFAULT 0,
	mark       BIGINT NOT NULL DEFAULT 0,
	updated_ms BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, value)
) ENGINE=InnoDB`
	default:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	scope      TEXT    NOT NULL,
	value      INTEGER NOT NULL,
	owner      TEXT    NOT NULL DEFAULT '',
	token      TEXT    NOT NULL DEFAULT '',
	expires_ms INTEGER NOT NULL DEFAULT 0,
	mark       INTEGER NOT NULL DEFAULT 0,
	updated_ms INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, value)
) WITHOUT ROWID`
	}
}

// queries holds a store's statements, built once by New.
type queries struct {
	create    string
	probe     string // fails unless the table has every column
	freeRow   string // the best free row: value, mark, token
	missing   string // whether value 0 has a row, and the lowest value after a row that has none
	one       string // one value's row: mark, token, free
	insert    string // claims a value without a row
	claim     string // claims a free row
	readBack  string // a row by token: owner, expires, mark, live
	renew     string
	release   string
	list      string
	createErr func(error) bool // reports a CREATE error that a concurrent CREATE explains
}

func (d Dialect) queries(table string) queries {
	now := d.nowMs()
	raise := "mark = CASE WHEN mark < ? THEN ? ELSE mark END"
	q := queries{
		create: d.ddl(table),
		probe:  "SELECT scope, value, owner, token, expires_ms, mark, updated_ms FROM " + table + " WHERE 1 = 0",
		freeRow: "SELECT value, mark, token FROM " + table +
			" WHERE scope = ? AND value < ? AND (token = '' OR expires_ms <= " + now + ")" +
			" ORDER BY mark, value LIMIT 1",
		missing: "SELECT (SELECT COUNT(*) FROM " + table + " WHERE scope = ? AND value = 0)," +
			" (SELECT MIN(a.value + 1) FROM " + table + " a WHERE a.scope = ? AND a.value + 1 < ?" +
			" AND NOT EXISTS (SELECT 1 FROM " + table + " b WHERE b.scope = ? AND b.value = a.value + 1))",
		one: "SELECT mark, token, CASE WHEN token = '' OR expires_ms <= " + now + " THEN 1 ELSE 0 END FROM " + table +
			" WHERE scope = ? AND value = ?",
		claim: "UPDATE " + table + " SET owner = ?, token = ?, expires_ms = " + now + " + ?, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND mark = ? AND (token = '' OR expires_ms <= " + now + ")",
		readBack: "SELECT owner, expires_ms, mark, CASE WHEN expires_ms > " + now + " THEN 1 ELSE 0 END FROM " + table +
			" WHERE scope = ? AND value = ? AND token = ?",
		renew: "UPDATE " + table + " SET expires_ms = " + now + " + ?, " + raise + ", updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND token <> '' AND expires_ms > " + now,
		release: "UPDATE " + table + " SET owner = '', token = '', expires_ms = " + now + ", mark = ?, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND token <> '' AND expires_ms > " + now,
		list: "SELECT value, owner, token, expires_ms, mark, CASE WHEN token <> '' AND expires_ms > " + now +
			" THEN 1 ELSE 0 END FROM " + table + " WHERE scope = ? ORDER BY value",
		createErr: func(error) bool { return false },
	}
	cols := " (scope, value, owner, token, expires_ms, mark, updated_ms) VALUES (?, ?, ?, ?, " + now + " + ?, 0, " + now + ")"
	switch d {
	case MySQL:
		q.insert = "INSERT IGNORE INTO " + table + cols
	default:
		q.insert = "INSERT INTO " + table + cols + " ON CONFLICT (scope, value) DO NOTHING"
	}
	if d == Postgres {
		// Two sessions creating the same table at once can collide in the catalog.
		q.createErr = func(err error) bool {
			pe, ok := errors.AsType[*pgconn.PgError](err)
			return ok && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")
		}
		for _, p := range []*string{&q.probe, &q.freeRow, &q.missing, &q.one, &q.insert, &q.claim, &q.readBack, &q.renew, &q.release, &q.list} {
			*p = dollars(*p)
		}
	}
	return q
}

// dollars turns ? placeholders into PostgreSQL's $1, $2, ... The statements here
// have no ? inside string literals.
func dollars(s string) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// transient reports whether err is a deadlock, a serialization failure or a busy
// database: the statement was rolled back and may be run again.
func transient(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03"
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return me.Number == 1213 || me.Number == 1205
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		code := se.Code() & 0xff
		return code == 5 || code == 6 // SQLITE_BUSY, SQLITE_LOCKED
	}
	return false
}
