// Package indb has PostgreSQL or MariaDB make flurry IDs itself: a function,
// flurry_next_id() by default, that returns the next ID of a layout as a bigint,
// usable as a column DEFAULT (PostgreSQL), in a BEFORE INSERT trigger (MariaDB, whose
// DEFAULT cannot call a stored function) and in INSERT ... SELECT of any number of
// rows. It is Instagram's 2012 scheme (a sequence and the clock) without its wrap:
// the sequence field never wraps within a tick, a transaction that rolls
// back never makes an ID reusable, a clock behind the last issued tick fails with
// the gap after a bounded wait, and a copy of the database refuses to issue its
// original's IDs.
//
//	script, err := indb.Emit(indb.Options{Engine: indb.Postgres, Layout: l, Node: nv})
//	fmt.Print(script) // flurry sql emit
//
//	db, e, _, err := indb.Open(ctx, "postgres://app@db1:5432/shop")
//	in, err := indb.Install(ctx, db, indb.InstallOptions{ // flurry sql install
//		Options: indb.Options{Engine: e, Layout: l, Targets: []indb.Target{{Table: "orders", Column: "id"}}},
//		Leases:  leases, LeaseName: "etcd://10.0.0.5:2379"})
//	out, err := indb.Uninstall(ctx, db, e, indb.UninstallOptions{Leases: leases}) // flurry sql uninstall
//
// How it works. Each call takes a number from a sequence (which no rollback gives
// back) and makes the ID of the clock's tick, a sequence value no other call of
// the tick has, and the database's node value. A tick's values never wrap: when
// they run out, calls wait for the next tick, within Options.MaxWait; a clock
// behind the last issued tick is waited out the same way, else the call fails
// naming the gap.
//
// On PostgreSQL the function is one SQL expression that the server inlines into
// the calling statement: nextval of a counter whose slots are the ID without its
// node bits, compared with the clock's tick, ORed with the node bits. The counter
// counts a tick's slots into a guard zone, never into the next tick; a slot behind
// the clock or in a zone goes to the slow path, which moves the counter (setval
// under an advisory lock) to a tick later than it has ever been in, so moves and
// counting never hand out slots of one tick. On MariaDB, whose SETVAL takes only
// literals and whose stored functions run no dynamic SQL, a SEQUENCE numbers the
// calls, a MEMORY row holds the claimed tick and its base (the ID's sequence value
// is the call's number less the base), and an Aria row is the crash-safe
// reservation of ticks that a restart starts after; MariaDB locks those tables for
// each statement that calls the function, so those statements take turns.
// docs/in-database.md has the argument, the tests that check it and the costs.
//
// The node value is leased from a flurry lease store (any of lease/leaseurl's) and
// pinned there (lease.Pinner) for as long as the function is installed; Uninstall
// releases it with a mark above the last slot. The database's identity
// (PostgreSQL: system identifier and database oid; MariaDB: host, port, data
// directory, server id and database) is recorded with the layout and the node value
// in the table flurry_sql_state, and the function refuses to issue in a database
// whose identity differs: a template copy, a restore elsewhere. Install with
// InstallOptions.NewNode gives such a copy a node value of its own.
package indb
