// Package indb has PostgreSQL or MariaDB make flurry IDs itself: a function,
// flurry_next_id() by default, that returns the next ID of a layout as a bigint,
// usable as a column DEFAULT (PostgreSQL), in a BEFORE INSERT trigger (MariaDB, whose
// DEFAULT cannot call a stored function) and in INSERT ... SELECT of any number of
// rows. It is Instagram's 2012 scheme (PL/pgSQL, a sequence and the clock) without
// its wrap: the sequence field never wraps within a tick, a transaction that rolls
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
// How it works. The counter holds a slot, tick << seqBits | seq: every call takes
// the next slot, so two calls never share one, and the ID is composed from the
// slot's tick and sequence and the database's node value. A slot whose tick is the
// clock's is returned at once; a slot ahead of the clock (its tick's sequence
// values were used up, or the clock stepped back) is returned after the clock
// reaches its tick, within Options.MaxWait, else the call fails naming the gap; a
// slot behind the clock moves the counter to the start of the current tick.
//
// On PostgreSQL the counter is a sequence (nextval is not transactional). setval
// can move it back, so a move is made under an advisory lock and announced on a
// second sequence (odd while a move is under way): a call takes its slot without
// a lock, and keeps it only when that sequence read the same even value before
// and after its nextval, so no slot a move could hand out again is ever returned.
// On MariaDB, whose SETVAL takes only literals and whose stored functions run no
// dynamic SQL, the counter is a row of an Aria table (not undone by a rollback),
// raised by one UPDATE ... GREATEST(slot + 1, tick << seqBits); MariaDB locks it for
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
