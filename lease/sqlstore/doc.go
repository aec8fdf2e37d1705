// Package sqlstore keeps node-value leases and their high-water marks in one SQL
// table, on PostgreSQL, MySQL or MariaDB, or SQLite. Expiry is judged by the
// database's clock, never a client's. A [Store] is a lease.Store:
//
//	o, err := sqlstore.ParseURL("postgres://flurry@db:5432/ids?sslmode=disable")
//	if err != nil { ... }
//	st, err := sqlstore.Open(ctx, o) // creates the table if missing
//	if err != nil { ... }
//	defer st.Close()
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l},
//		lease.Options{Store: st, Scope: "orders"})
//
// [ParseURL] reads, without connecting:
//
//	postgres://user[:pass]@host:5432[,host2:5432]/db?sslmode=disable   (also postgresql://), pgx
//	mysql://user[:pass]@host:3306/db                                    MySQL 8 or MariaDB 10.3+
//	sqlite:///absolute/path/leases.db                                   SQLite (pure Go), WAL
//	sqlite:relative/path/leases.db
//
// Query keys: table= (default flurry_leases), request_timeout= (default 5s; none for
// SQLite), max_conns= (the pool's cap on connections, default min(4*GOMAXPROCS, 16);
// -1 for none), busy_timeout= (SQLite, default 5s), and the driver's own (sslmode,
// connect_timeout, target_session_attrs, ... for pgx; tls, timeout for MySQL). Any
// other key is an error. [Options] made by hand take any driver.Connector of the
// Dialect's engine, and [New] wraps a *sql.DB the caller opened.
//
// Every key, the table's DDL for each engine, how to read it, and how Acquire stays
// atomic on any engine without transactions are in docs/leases.md ("SQL store");
// what a failover of each engine can lose is in docs/high-availability.md.
package sqlstore
