package sqlconn

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Transient reports whether err is a deadlock, a serialization failure, a lock wait
// timeout or a busy database: the statement or transaction was rolled back and may be
// run again. It knows the errors of pgx, go-sql-driver/mysql and modernc.org/sqlite.
func Transient(err error) bool {
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

// createRace reports a CREATE TABLE IF NOT EXISTS error that a concurrent CREATE
// explains: two PostgreSQL sessions creating one table at once collide in the catalog.
func createRace(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")
}
