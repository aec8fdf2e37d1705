package sqlstore

import "github.com/flurryid/flurry/internal/sqlconn"

// Dialect names the SQL engine behind a *sql.DB given to [New].
type Dialect int

// The engines sqlstore speaks. The zero Dialect is none of them.
const (
	// Postgres is PostgreSQL 10 or later.
	Postgres = Dialect(sqlconn.Postgres)
	// MySQL is MySQL 8 or MariaDB 10.3 or later.
	MySQL = Dialect(sqlconn.MySQL)
	// SQLite is SQLite 3.24 or later.
	SQLite = Dialect(sqlconn.SQLite)
)

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
	epoch      BIGINT       NOT NULL DEFAULT 0,
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
	epoch      BIGINT NOT NULL DEFAULT 0,
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
	epoch      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scope, value)
) WITHOUT ROWID`
	}
}

// queries holds a store's statements, built once by New.
type queries struct {
	create   string
	probe    string // fails unless the table has every column
	freeRow  string // the best free rows, up to a limit: value, mark, token
	top      string // the scope's highest value with a row, NULL for none
	missing  string // whether a value v has a row, and the lowest value from v on after a row that has none
	one      string // one value's row: mark, token, free
	insert   string // claims a value without a row
	claim    string // claims a free row
	readBack string // a row by token: owner, expires, mark, live
	lockRow  string // readBack, locking the row until the transaction ends
	renew    string
	takeover string // claims a live row by its token, mark and epoch, for a new token
	release  string
	list     string
	scopeMax string // the highest mark of the scope's values without a live lease but one
	// renewRet is renew returning the row as readBack reads it (owner, expires,
	// mark, epoch), on PostgreSQL; empty elsewhere (MySQL has no UPDATE ...
	// RETURNING), where renew reads the row back with readBack.
	renewRet string
	// renewMany renews many rows in one statement on PostgreSQL, from arrays of
	// scopes, values, tokens, ttls and marks, returning the rows it renewed;
	// MySQL's is built for each batch (mysqlRenewMany), SQLite renews one by one.
	renewMany string
	table     string
	epoch     sqlconn.Column
}

func (d Dialect) queries(table string) queries {
	now := d.nowMs()
	raise := "mark = CASE WHEN mark < ? THEN ? ELSE mark END"
	q := queries{
		table:  table,
		create: d.ddl(table),
		probe:  "SELECT scope, value, owner, token, expires_ms, mark, updated_ms, epoch FROM " + table + " WHERE 1 = 0",
		freeRow: "SELECT value, mark, token FROM " + table +
			" WHERE scope = ? AND value < ? AND (token = '' OR expires_ms <= " + now + ")" +
			" ORDER BY mark, value LIMIT ?",
		top: "SELECT MAX(value) FROM " + table + " WHERE scope = ?",
		// missing: whether a value has a row, and the first value above it without
		// one. The gap is where a row's next row (LEAD, in the primary key's order)
		// is not the value above it: one ordered pass over the scope's rows from
		// the place on, stopping at the first gap. A self-join (NOT EXISTS of the
		// value above) lets the planner pick a nested loop that reads the whole
		// scope for each row when the table's statistics predate the scope's
		// growth: minutes at 10,000 rows, with every connection of the pool in it.
		missing: "SELECT (SELECT COUNT(*) FROM " + table + " WHERE scope = ? AND value = ?)," +
			" (SELECT w.v + 1 FROM (SELECT value AS v, LEAD(value) OVER (ORDER BY value) AS nxt FROM " + table +
			" WHERE scope = ? AND value >= ?) w WHERE w.v + 1 < ? AND (w.nxt IS NULL OR w.nxt <> w.v + 1) ORDER BY w.v LIMIT 1)",
		one: "SELECT mark, token, CASE WHEN token = '' OR expires_ms <= " + now + " THEN 1 ELSE 0 END FROM " + table +
			" WHERE scope = ? AND value = ?",
		claim: "UPDATE " + table + " SET owner = ?, token = ?, expires_ms = " + now + " + ?, epoch = epoch + 1, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND mark = ? AND (token = '' OR expires_ms <= " + now + ")",
		readBack: "SELECT owner, expires_ms, mark, epoch, CASE WHEN expires_ms > " + now + " THEN 1 ELSE 0 END FROM " + table +
			" WHERE scope = ? AND value = ? AND token = ?",
		renew: "UPDATE " + table + " SET expires_ms = " + now + " + ?, " + raise + ", epoch = epoch + 1, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND token <> '' AND expires_ms > " + now,
		// The mark and epoch read before, in the WHERE clause, make the read and
		// this write one step: a write between them moved the epoch.
		takeover: "UPDATE " + table + " SET owner = ?, token = ?, expires_ms = " + now + " + ?, " + raise + ", epoch = epoch + 1, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND token <> '' AND expires_ms > " + now + " AND mark = ? AND epoch = ?",
		release: "UPDATE " + table + " SET owner = '', token = '', expires_ms = " + now + ", mark = ?, updated_ms = " + now +
			" WHERE scope = ? AND value = ? AND token = ? AND token <> '' AND expires_ms > " + now,
		list: "SELECT value, owner, token, expires_ms, mark, epoch, CASE WHEN token <> '' AND expires_ms > " + now +
			" THEN 1 ELSE 0 END FROM " + table + " WHERE scope = ? ORDER BY value",
		scopeMax: "SELECT MAX(mark) FROM " + table + " WHERE scope = ? AND value <> ? AND (token = '' OR expires_ms <= " + now + ")",
	}
	cols := " (scope, value, owner, token, expires_ms, mark, updated_ms, epoch) VALUES (?, ?, ?, ?, " + now + " + ?, 0, " + now + ", 1)"
	typ := "BIGINT"
	if d == SQLite {
		typ = "INTEGER"
	}
	// Tables made before epochs lack the column; their rows count from 0.
	q.epoch = sqlconn.Column{Name: "epoch", Probe: "SELECT epoch FROM " + table + " WHERE 1 = 0",
		Add: "ALTER TABLE " + table + " ADD COLUMN epoch " + typ + " NOT NULL DEFAULT 0"}
	// A takeover reads the row, then writes it, in one transaction that holds the
	// row from the read on: the holder's renewals wait for it rather than move the
	// epoch between the two, which would leave a takeover losing to a holder that
	// renews without pause. SQLite has no row locks: an UPDATE that changes
	// nothing, as the transaction's first statement, takes the database's write
	// lock at once (waiting in the busy handler, as BEGIN IMMEDIATE would).
	if d == SQLite {
		q.lockRow = "UPDATE " + table + " SET epoch = epoch WHERE scope = ? AND value = ? AND token = ?" +
			" RETURNING owner, expires_ms, mark, epoch, CASE WHEN expires_ms > " + now + " THEN 1 ELSE 0 END"
	} else {
		q.lockRow = q.readBack + " FOR UPDATE"
	}
	if d == Postgres {
		q.renewRet = q.renew + " RETURNING owner, expires_ms, mark, epoch"
		q.renewMany = "UPDATE " + table + " AS t SET expires_ms = " + now + " + b.ttl, mark = GREATEST(t.mark, b.mark)," +
			" epoch = t.epoch + 1, updated_ms = " + now +
			" FROM unnest(?::text[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[]) AS b(scope, value, token, ttl, mark)" +
			" WHERE t.scope = b.scope AND t.value = b.value AND t.token = b.token AND t.token <> '' AND t.expires_ms > " + now +
			" RETURNING t.scope, t.value, t.owner, t.expires_ms, t.mark, t.epoch, 1"
	}
	switch d {
	case MySQL:
		q.insert = "INSERT IGNORE INTO " + table + cols
	default:
		q.insert = "INSERT INTO " + table + cols + " ON CONFLICT (scope, value) DO NOTHING"
	}
	sqlconn.Placeholders(sqlconn.Engine(d), &q.probe, &q.freeRow, &q.top, &q.missing, &q.one, &q.insert, &q.claim, &q.readBack, &q.lockRow, &q.renew, &q.takeover, &q.release, &q.list, &q.scopeMax, &q.renewRet, &q.renewMany)
	return q
}

// String returns the dialect's name: "postgres", "mysql" or "sqlite".
func (d Dialect) String() string { return sqlconn.Engine(d).String() }
