package sqlconn

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"

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
		conn, err := sqlite.NewConnector(dsn)
		if err != nil {
			return nil, err
		}
		return busyConnector{Connector: conn, busy: c.Busy}, nil
	}
	return nil, fmt.Errorf("unknown engine %d", int(c.Engine))
}

// busyConnector opens a SQLite connection again, for up to the busy timeout, while
// opening fails with a busy database. Setting journal_mode=WAL, which each new
// connection does, needs the file's write lock while the file is still in rollback
// mode, as a new file is; when another connection holds that lock (processes
// opening a new file at the same moment: one of them is creating the table or
// switching the file to WAL) SQLite answers SQLITE_BUSY at once, without waiting the
// busy timeout, and the open would fail. Once the other connection commits, the file
// is in WAL mode and opening succeeds.
type busyConnector struct {
	driver.Connector
	busy time.Duration
}

// Connect implements driver.Connector.
func (b busyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	deadline := time.Now().Add(b.busy)
	backoff := Backoff()
	for attempt := 1; ; attempt++ {
		conn, err := b.Connector.Connect(ctx)
		if err == nil || !Transient(err) || !time.Now().Before(deadline) {
			return conn, err
		}
		if werr := backoff.Wait(ctx, attempt); werr != nil {
			return nil, err
		}
	}
}
