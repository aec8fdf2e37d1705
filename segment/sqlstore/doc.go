// Package sqlstore keeps segment tags in SQL tables, on PostgreSQL, MySQL or
// MariaDB, or SQLite, in the form of Meituan Leaf's leaf_alloc table: a Leaf user
// points the store at the existing table and moves over without migrating data.
// A [Store] is a segment.Store:
//
//	o, err := sqlstore.ParseURL("postgres://flurry@db:5432/ids?sslmode=disable")
//	if err != nil { ... }
//	st, err := sqlstore.Open(ctx, o) // creates the tables if missing
//	if err != nil { ... }
//	defer st.Close()
//	a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st}, Tag: "order"})
//
// [ParseURL] reads, without connecting:
//
//	postgres://user[:pass]@host:5432[,host2:5432]/db?sslmode=disable   (also postgresql://), pgx
//	mysql://user[:pass]@host:3306/db                                    MySQL 8 or MariaDB 10.3+
//	sqlite:///absolute/path/segments.db                                 SQLite (pure Go), WAL
//	sqlite:relative/path/segments.db
//
// Query keys: table= (default flurry_segment; table=leaf_alloc serves a Leaf
// table), schema=leaf or schema=tinyid (Leaf's and tinyid's own tables, served by
// [OpenAny] as [LeafTable] and [TinyID]), request_timeout= (default 5s; none for
// SQLite), busy_timeout= (SQLite, default 5s), and the driver's own (sslmode,
// connect_timeout, target_session_attrs, ... for pgx; tls, timeout for MySQL). Any
// other key is an error. [Options] made by hand take any driver.Connector of the
// Dialect's engine, and [New] wraps a *sql.DB the caller opened.
//
// Every key, the tables' DDL for each engine, Leaf's and tinyid's tables, and how a
// Take stays atomic without deadlocks are in docs/segments.md ("SQL store"); what a
// failover of each engine can lose is in docs/high-availability.md.
package sqlstore
