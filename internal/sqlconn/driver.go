package sqlconn

import (
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
)

// connector makes the Connector of c's engine and settings, without connecting.
func (c Config) connector() (driver.Connector, error) {
	switch c.Engine {
	case Postgres:
		return stdlib.GetConnector(*c.PG), nil
	case MySQL:
		return mysql.NewConnector(c.MySQL)
	case SQLite:
		// WAL lets readers run beside the one writer; synchronous=FULL makes each
		// commit durable, since what the stores keep must survive a power loss; the
		// busy timeout makes a writer wait for another process's write instead of
		// failing.
		dsn := c.SQLitePath + "?_pragma=busy_timeout(" + strconv.FormatInt(c.Busy.Milliseconds(), 10) + ")" +
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
		return sqlite.NewConnector(dsn)
	}
	return nil, fmt.Errorf("unknown engine %d", int(c.Engine))
}
