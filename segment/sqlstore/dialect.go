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
	// SQLite is SQLite 3.35 or later (for UPDATE ... RETURNING).
	SQLite = Dialect(sqlconn.SQLite)
)

// ddl returns the CREATE TABLE statements of the tag table and the table of
// returned blocks; doc.go shows them.
func (d Dialect) ddl(table, returned string) (string, string) {
	switch d {
	case Postgres:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	biz_tag     VARCHAR(128) NOT NULL DEFAULT '',
	max_id      BIGINT       NOT NULL DEFAULT 1,
	step        BIGINT       NOT NULL,
	description VARCHAR(256) DEFAULT NULL,
	update_time TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (biz_tag)
)`, `CREATE TABLE IF NOT EXISTS ` + returned + ` (
	biz_tag  VARCHAR(128) NOT NULL,
	first_id BIGINT       NOT NULL,
	last_id  BIGINT       NOT NULL,
	PRIMARY KEY (biz_tag, first_id)
)`
	case MySQL:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	biz_tag     VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
	max_id      BIGINT NOT NULL DEFAULT '1',
	step        BIGINT NOT NULL,
	description VARCHAR(256) CHARACTER SET utf8mb4 DEFAULT NULL,
	update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
	PRIMARY KEY (biz_tag)
) ENGINE=InnoDB`, `CREATE TABLE IF NOT EXISTS ` + returned + ` (
	biz_tag  VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	first_id BIGINT NOT NULL,
	last_id  BIGINT NOT NULL,
	PRIMARY KEY (biz_tag, first_id)
) ENGINE=InnoDB`
	default:
		return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	biz_tag     TEXT    NOT NULL DEFAULT '',
	max_id      INTEGER NOT NULL DEFAULT 1,
	step        INTEGER NOT NULL,
	description TEXT    DEFAULT NULL,
	update_time TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
	PRIMARY KEY (biz_tag)
) WITHOUT ROWID`, `CREATE TABLE IF NOT EXISTS ` + returned + ` (
	biz_tag  TEXT    NOT NULL,
	first_id INTEGER NOT NULL,
	last_id  INTEGER NOT NULL,
	PRIMARY KEY (biz_tag, first_id)
) WITHOUT ROWID`
	}
}

// now is the SQL expression for the database's clock, to store in update_time.
func (d Dialect) now() string {
	switch d {
	case Postgres:
		// clock_timestamp, not now(): a Take that waited for the row lock records
		// when it changed the row, not when its transaction began.
		return "clock_timestamp()"
	case MySQL:
		return "CURRENT_TIMESTAMP"
	default:
		return "strftime('%Y-%m-%d %H:%M:%f', 'now')"
	}
}

// updatedMs is the SQL expression for t.update_time in Unix milliseconds, whatever
// the column's type: a Leaf table's TIMESTAMP (MySQL), TIMESTAMP without time zone
// (PostgreSQL, read in the session's time zone, as it was written) or text (SQLite).
func (d Dialect) updatedMs() string {
	switch d {
	case Postgres:
		return "CAST(FLOOR(EXTRACT(EPOCH FROM t.update_time::timestamptz) * 1000) AS BIGINT)"
	case MySQL:
		return "CAST(UNIX_TIMESTAMP(t.update_time) * 1000 AS SIGNED)"
	default:
		return "CAST(ROUND((julianday(t.update_time) - 2440587.5) * 86400000.0) AS INTEGER)"
	}
}

// widenStep is the statement that widens a Leaf table's INT step column.
func (d Dialect) widenStep(table string) string {
	if d == Postgres {
		return "ALTER TABLE " + table + " ALTER COLUMN step TYPE BIGINT"
	}
	return "ALTER TABLE " + table + " MODIFY step BIGINT NOT NULL"
}

// bigint casts a SUM to a 64-bit integer (PostgreSQL sums to NUMERIC, MySQL to
// DECIMAL).
func (d Dialect) bigint(expr string) string {
	switch d {
	case Postgres:
		return "CAST(" + expr + " AS BIGINT)"
	case MySQL:
		return "CAST(" + expr + " AS SIGNED)"
	default:
		return expr
	}
}

// queries holds a store's statements, built once by New. A row of the returned
// table with first_id 0 is the top mark (see doc.go); real blocks start at 1.
type queries struct {
	createTags, createReturned string
	probeTags, probeReturned   string

	lock          string // locks a tag's row: max_id, step
	claimable     string // the lowest returned block above a floor, within a limit
	top           string // whether the top mark is set
	deleteBlock   string
	setTop        string
	advance       string // sets max_id
	overlap       string // returned blocks overlapping First..Last
	insertBlock   string
	insertTag     string // does nothing if the tag exists
	countReturned string // rows of a tag in the returned table, marks included
	clearReturned string
	setStep       string
	readStep      string
	list          string
	allocs        string // Leaf's getAllLeafAllocs
}

func (d Dialect) queries(table, returned string) queries {
	now := d.now()
	q := queries{
		probeTags:     "SELECT biz_tag, max_id, step, description, update_time FROM " + table + " WHERE 1 = 0",
		probeReturned: "SELECT biz_tag, first_id, last_id FROM " + returned + " WHERE 1 = 0",
		lock:          "SELECT max_id, step FROM " + table + " WHERE biz_tag = ? FOR UPDATE",
		claimable: "SELECT first_id, last_id FROM " + returned +
			" WHERE biz_tag = ? AND first_id > ? AND last_id <= ? ORDER BY first_id LIMIT 1",
		top:           "SELECT COUNT(*) FROM " + returned + " WHERE biz_tag = ? AND first_id = 0",
		deleteBlock:   "DELETE FROM " + returned + " WHERE biz_tag = ? AND first_id = ?",
		setTop:        "INSERT INTO " + returned + " (biz_tag, first_id, last_id) VALUES (?, 0, 0)",
		advance:       "UPDATE " + table + " SET max_id = ?, update_time = " + now + " WHERE biz_tag = ?",
		overlap:       "SELECT COUNT(*) FROM " + returned + " WHERE biz_tag = ? AND first_id > 0 AND first_id <= ? AND last_id >= ?",
		insertBlock:   "INSERT INTO " + returned + " (biz_tag, first_id, last_id) VALUES (?, ?, ?)",
		countReturned: "SELECT COUNT(*) FROM " + returned + " WHERE biz_tag = ?",
		clearReturned: "DELETE FROM " + returned + " WHERE biz_tag = ?",
		setStep:       "UPDATE " + table + " SET step = ?, update_time = " + now + " WHERE biz_tag = ?",
		readStep:      "SELECT step FROM " + table + " WHERE biz_tag = ?",
		list: "SELECT t.biz_tag, t.max_id, t.step, t.description, " + d.updatedMs() + "," +
			" (SELECT COUNT(*) FROM " + returned + " r WHERE r.biz_tag = t.biz_tag AND r.first_id = 0)," +
			" " + d.bigint("COALESCE((SELECT SUM(r.last_id - r.first_id + 1) FROM "+returned+" r WHERE r.biz_tag = t.biz_tag AND r.first_id > 0), 0)") +
			" FROM " + table + " t",
		allocs: "SELECT biz_tag, max_id, step, update_time FROM " + table,
	}
	q.createTags, q.createReturned = d.ddl(table, returned)
	insert := " INTO " + table + " (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, " + now + ")"
	switch d {
	case MySQL:
		// IGNORE also turns a too large step for a Leaf table's INT column into a
		// warning; Create reads the step back to catch that.
		q.insertTag = "INSERT IGNORE" + insert
	default:
		q.insertTag = "INSERT" + insert + " ON CONFLICT (biz_tag) DO NOTHING"
	}
	switch d {
	case SQLite:
		// SQLite has no row locks. A write as the transaction's first statement takes
		// the database's write lock at once, waiting in the busy handler, as BEGIN
		// IMMEDIATE does; a read first would take a snapshot that a later write could
		// not upgrade (SQLITE_BUSY_SNAPSHOT).
		q.lock = "UPDATE " + table + " SET max_id = max_id WHERE biz_tag = ? RETURNING max_id, step"
	}
	sqlconn.Placeholders(sqlconn.Engine(d), &q.lock, &q.claimable, &q.top, &q.deleteBlock, &q.setTop, &q.advance, &q.overlap,
		&q.insertBlock, &q.insertTag, &q.countReturned, &q.clearReturned, &q.setStep, &q.readStep)
	return q
}

// String returns the dialect's name: "postgres", "mysql" or "sqlite".
func (d Dialect) String() string { return sqlconn.Engine(d).String() }
