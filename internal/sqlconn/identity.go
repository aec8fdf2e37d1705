package sqlconn

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/flurryid/flurry/internal/storeid"
)

// Identity names the table's data: the database server's own identifier
// (PostgreSQL's system_identifier, or its address and port where reading it is not
// allowed; MySQL's and MariaDB's server_uuid, or host name and port), the
// database and the table. Two processes that reach one table by different
// addresses get one identity. A SQLite file is private to its machine: its
// identity is the host, the file and the table.
func (h *Handle) Identity(ctx context.Context) (id string, private bool, err error) {
	ctx, end := h.Call.Start(ctx)
	defer end(&err)
	one := func(q string) (string, error) {
		var s sql.NullString
		if err := h.DB.QueryRowContext(ctx, q).Scan(&s); err != nil {
			return "", err
		}
		return s.String, nil
	}
	var server, db string
	switch h.Engine {
	case Postgres:
		if server, err = one("SELECT system_identifier::text FROM pg_control_system()"); err != nil || server == "" {
			server, err = one("SELECT COALESCE(host(inet_server_addr()), 'socket') || ':' || COALESCE(inet_server_port()::text, '')")
		}
		if err == nil {
			db, err = one("SELECT current_database()")
		}
		id = "postgres:" + server + "/" + db + "/" + h.Table
	case MySQL:
		if server, err = one("SELECT @@server_uuid"); err != nil || server == "" {
			server, err = one("SELECT CONCAT(@@hostname, ':', @@port)")
		}
		if err == nil {
			db, err = one("SELECT DATABASE()")
		}
		id = "mysql:" + server + "/" + db + "/" + h.Table
	default:
		db, err = one("SELECT file FROM pragma_database_list WHERE name = 'main'")
		id, private = "sqlite:"+storeid.Host()+":"+db+"/"+h.Table, true
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the identity of the %v database: %w", h.Engine, err)
	}
	return id, private, nil
}
