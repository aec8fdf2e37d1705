package indb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
	_ "github.com/flurryid/flurry/lease/sqlstore" // the database itself as the lease store
	"github.com/flurryid/flurry/verify/testenv"
)

// insertRows inserts n rows into items, leaving id to the DEFAULT (PostgreSQL) or
// the trigger (MariaDB), in one INSERT ... SELECT, and returns the ids in
// insertion order.
func insertRows(t *testing.T, db *sql.DB, e indb.Engine, table string, from, n int) []flurry.ID {
	t.Helper()
	q := fmt.Sprintf("INSERT INTO %s (v) SELECT g FROM generate_series(%d, %d) g ORDER BY g", table, from, from+n-1)
	if e == indb.MariaDB {
		q = fmt.Sprintf("INSERT INTO %s (v) SELECT seq FROM seq_%d_to_%d ORDER BY seq", table, from, from+n-1)
	}
	if _, err := db.ExecContext(ctx(t), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	rows, err := db.QueryContext(ctx(t), fmt.Sprintf("SELECT id FROM %s WHERE v BETWEEN %d AND %d ORDER BY v", table, from, from+n-1))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []flurry.ID
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, flurry.ID(id))
	}
	if len(ids) != n {
		t.Fatalf("read %d rows back; want %d", len(ids), n)
	}
	return ids
}

// TestInstallMakesIDs installs the instagram layout with the database itself as
// the lease store, fills a column by its DEFAULT or trigger and checks the IDs:
// unique, increasing, the leased node value, the time of the insert, inside
// layout.Bounds. Uninstall then removes everything and releases the value with a
// mark above the last ID.
func TestInstallMakesIDs(t *testing.T) {
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			rawURL, db := freshDB(t, e)
			if _, err := db.ExecContext(ctx(t), "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, v INT)"); err != nil {
				t.Fatal(err)
			}
			st, err := leaseurl.Open(ctx(t), rawURL)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			l := mustLayout(t, "instagram")
			before := time.Now()
			in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Targets: []indb.Target{{Table: "items", Column: "id"}}},
				Leases: st, LeaseName: indb.SelfStore})
			if in.Lease.Token == "" || in.Lease.Store != indb.SelfStore || in.Copy() {
				t.Fatalf("Installed = %+v", in)
			}
			bulk := insertRows(t, db, e, "items", 1, 5000)
			var single []flurry.ID
			for i := 0; i < 50; i++ {
				var id int64
				if _, err := db.ExecContext(ctx(t), fmt.Sprintf("INSERT INTO items (v) VALUES (%d)", 10000+i)); err != nil {
					t.Fatal(err)
				}
				if err := db.QueryRowContext(ctx(t), fmt.Sprintf("SELECT id FROM items WHERE v = %d", 10000+i)).Scan(&id); err != nil {
					t.Fatal(err)
				}
				single = append(single, flurry.ID(id))
			}
			after := time.Now()
			all := append(append([]flurry.ID(nil), bulk...), single...)
			checkIDs(t, l, in.Node, all)
			lo, hi, err := l.Bounds(before.Add(-time.Second), after.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []flurry.ID{all[0], all[len(all)-1]} {
				if id < lo || id > hi {
					t.Errorf("ID %d (%s) is outside layout.Bounds of the test's time [%d, %d]", id, l.TimeOf(id), lo, hi)
				}
			}
			recs, err := st.List(ctx(t), in.Lease.Scope)
			if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Expires.Before(time.Now().Add(365*24*time.Hour)) {
				t.Fatalf("lease records while installed: %+v, %v; want the value held for years", recs, err)
			}

			// Installing again is an upgrade: same node value, same lease.
			again := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l}, Leases: st, LeaseName: indb.SelfStore})
			if !again.Upgraded || again.Node != in.Node || again.Lease.Token != in.Lease.Token || len(again.Targets) != 1 {
				t.Errorf("reinstall = %+v; want an upgrade keeping node %v and the target", again, in.Node)
			}
			more := insertRows(t, db, e, "items", 20000, 10)
			checkIDs(t, l, in.Node, append(all, more...))
			// Another layout is refused.
			if _, err := indb.Install(ctx(t), db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: mustLayout(t, "twitter")}, Leases: st, LeaseName: indb.SelfStore}); !errors.Is(err, indb.ErrLayoutMismatch) {
				t.Errorf("install with another layout: %v; want ErrLayoutMismatch", err)
			}

			out, err := indb.Uninstall(ctx(t), db, e, indb.UninstallOptions{Leases: st})
			if err != nil {
				t.Fatal(err)
			}
			last := more[len(more)-1]
			if !out.Released || out.Mark < l.TimeOf(last).UnixMilli() {
				t.Errorf("Uninstall = released %v, mark %d; want released with a mark at or above the last ID's tick %d", out.Released, out.Mark, l.TimeOf(last).UnixMilli())
			}
			recs, err = st.List(ctx(t), in.Lease.Scope)
			if err != nil || len(recs) != 1 || recs[0].Held || recs[0].Mark != out.Mark {
				t.Errorf("lease records after uninstall: %+v, %v; want the value free with mark %d", recs, err, out.Mark)
			}
			if _, err := indb.Read(ctx(t), db, e, "", ""); !errors.Is(err, indb.ErrNotInstalled) {
				t.Errorf("Read after uninstall: %v; want ErrNotInstalled", err)
			}
			if _, err := db.ExecContext(ctx(t), "INSERT INTO items (v) VALUES (99999)"); err == nil && e == indb.Postgres {
				t.Errorf("a row without id went in after uninstall; the DEFAULT is still there")
			}
		})
	}
}

// tiny has 4 sequence values per millisecond, so that concurrent sessions ask
// for more IDs in a tick than the field holds.
const tiny = "time:41:1ms:2024-01-01T00:00:00Z,node:4,seq:2"

// TestConcurrentNoWrap has many sessions take IDs at once, one by one and in an
// INSERT ... SELECT, from a layout whose sequence field holds 4 values: ticks
// fill up and calls wait for the next one; no ID repeats and each session's IDs
// increase.
func TestConcurrentNoWrap(t *testing.T) {
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) { concurrent(t, e, tiny, 16, 250, 2000) })
	}
}

// TestConcurrentMoves is TestConcurrentNoWrap with 8 sequence values per tick and
// 32 sessions, for PostgreSQL: many ticks begin with a move of the counter while
// other sessions count into the new tick, and those sessions must all be turned
// away from the slots the move hands out again. One more session makes each of
// its moves sleep 2 ms halfway (TestClock's flurry.test_move_delay_ms), so that
// the others take slots while a move is under way. Three rounds: without the
// check of the move sequence a round issued duplicates in three runs of four.
func TestConcurrentMoves(t *testing.T) {
	for round := 0; round < 3; round++ {
		concurrent(t, indb.Postgres, "time:41:1ms:2024-01-01T00:00:00Z,node:4,seq:3", 32, 200, 0, 2)
	}
}

func concurrent(t *testing.T, e indb.Engine, text string, sessions, calls, rows int, moveDelayMs ...int) {
	_, db := freshDB(t, e)
	if _, err := db.ExecContext(ctx(t), "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	l := mustLayout(t, text)
	slots := int(l.MaxSequence() + 1)
	slow := len(moveDelayMs) > 0
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, TestClock: slow, Targets: []indb.Target{{Table: "items", Column: "id"}}}})
	if slow {
		sessions++ // the last one moves slowly
	}
	db.SetMaxOpenConns(sessions + 2)
	res := make([][]flurry.ID, sessions+1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failure error
	// Every session holds its connection before any calls, so that all of them
	// call at once, however long the server takes to have that many free.
	conns := make([]*sql.Conn, sessions)
	for s := range conns {
		c, err := serverConn(ctx(t), db)
		if err != nil {
			t.Fatalf("session %d of %d: %v", s+1, sessions, err)
		}
		defer c.Close()
		conns[s] = c
	}
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			c := conns[s]
			if slow && s == sessions-1 {
				if _, err := c.ExecContext(ctx(t), fmt.Sprintf("SELECT set_config('flurry.test_move_delay_ms', '%d', false)", moveDelayMs[0])); err != nil {
					mu.Lock()
					failure = err
					mu.Unlock()
					return
				}
			}
			for i := 0; i < calls; i++ {
				var id int64
				if err := c.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id); err != nil {
					mu.Lock()
					failure = fmt.Errorf("session %d call %d: %w", s, i, err)
					mu.Unlock()
					return
				}
				res[s] = append(res[s], flurry.ID(id))
			}
		}(s)
	}
	if rows > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[sessions] = insertRows(t, db, e, "items", 1, rows)
		}()
	}
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	n := checkIDs(t, l, in.Node, res...)
	perTick := map[int64]int{}
	for _, ids := range res {
		for _, id := range ids {
			p, _ := l.Decompose(id)
			perTick[p.Tick]++
		}
	}
	full := 0
	for _, c := range perTick {
		if c > slots {
			t.Fatalf("a tick holds %d IDs; the sequence field holds %d", c, slots)
		}
		if c == slots {
			full++
		}
	}
	t.Logf("%s: %d IDs in %d ticks, %d of them full (%d IDs)", e, n, len(perTick), full, slots)
	if full == 0 {
		t.Errorf("no tick was full: the test put no pressure on the sequence field")
	}
}

// setOffset steps this connection's database clock (Options.TestClock) by ms.
func setOffset(t *testing.T, c *sql.Conn, e indb.Engine, ms int64) {
	t.Helper()
	q := fmt.Sprintf("SELECT set_config('flurry.test_clock_offset_ms', '%d', false)", ms)
	if e == indb.MariaDB {
		q = fmt.Sprintf("SELECT @flurry_test_clock_offset_ms := %d", ms)
	}
	if _, err := c.ExecContext(ctx(t), q); err != nil {
		t.Fatal(err)
	}
}

// TestClockBehind steps the database clock back: a small step is waited out
// within MaxWait, a large one fails at once, naming the gap, and issues nothing.
func TestClockBehind(t *testing.T) {
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			_, db := freshDB(t, e)
			l := mustLayout(t, "instagram")
			in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, TestClock: true, MaxWait: time.Second}})
			c, err := db.Conn(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			first := next(t, c, indb.DefaultFunction, 3)
			setOffset(t, c, e, -300)
			waited := next(t, c, indb.DefaultFunction, 2)
			setOffset(t, c, e, -5000)
			var id int64
			err = c.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id)
			if err == nil || !strings.Contains(err.Error(), "behind the last issued ID's tick") {
				t.Fatalf("call with the clock 5 s behind = %d, %v; want a clock-behind error", id, err)
			}
			var gap int
			if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "clock is ")+len("clock is "):], "%d", &gap); serr != nil || gap < 4000 || gap > 6000 {
				t.Errorf("error %q names a gap of %d ms; want about 5000", err, gap)
			}
			if e == indb.Postgres && !strings.Contains(err.Error(), "FL001") {
				t.Errorf("error %q lacks SQLSTATE FL001", err)
			}
			setOffset(t, c, e, 0)
			later := next(t, c, indb.DefaultFunction, 2)
			checkIDs(t, l, in.Node, append(append(first, waited...), later...))
		})
	}
}

// TestRollbackKeepsIDsUsed takes IDs in a transaction that rolls back: later IDs
// are all above them.
func TestRollbackKeepsIDsUsed(t *testing.T) {
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			_, db := freshDB(t, e)
			if _, err := db.ExecContext(ctx(t), "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, v INT)"); err != nil {
				t.Fatal(err)
			}
			// One-second ticks: the IDs after the rollback come in the same tick as
			// the rolled-back ones, where a counter the rollback undid would issue
			// them again.
			l := mustLayout(t, "time:33:1s:2024-01-01T00:00:00Z,node:4,seq:10")
			in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Targets: []indb.Target{{Table: "items", Column: "id"}}}})
			tx, err := db.BeginTx(ctx(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			rolled := next(t, tx, indb.DefaultFunction, 20)
			if _, err := tx.ExecContext(ctx(t), "INSERT INTO items (v) VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			after := next(t, db, indb.DefaultFunction, 20)
			checkIDs(t, l, in.Node, append(append([]flurry.ID(nil), rolled...), after...))
		})
	}
}

// TestCopyRefuses copies a database that has the function: PostgreSQL by
// CREATE DATABASE ... TEMPLATE and by pg_dump | psql, MariaDB by mariadb-dump |
// mariadb. The copy's function refuses, Install refuses without NewNode, and
// with it leases the copy a value of its own; the original goes on with its own.
func TestCopyRefuses(t *testing.T) {
	cases := []struct {
		name string
		e    indb.Engine
	}{{"postgres-template", indb.Postgres}, {"postgres-dump", indb.Postgres}, {"mariadb-dump", indb.MariaDB}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			srcURL, src := freshDB(t, e)
			l := mustLayout(t, "twitter")
			st := leases()
			orig := install(t, src, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Node: datacenter(l, 1)}, Leases: st, Leased: []string{"worker"}})
			before := next(t, src, indb.DefaultFunction, 5)

			dst, src := copyDB(t, tc.name, e, srcURL, src)
			err := sqlErr(t, dst, "SELECT "+indb.DefaultFunction+"()")
			if !strings.Contains(err.Error(), "is a copy of the one the function was installed in") {
				t.Fatalf("the copy's function: %v; want a refusal naming the copy", err)
			}
			_, err = indb.Install(ctx(t), dst, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Node: datacenter(l, 1)}, Leases: st, LeaseName: "memory", Leased: []string{"worker"}})
			if !isCopy(err) {
				t.Fatalf("Install on the copy: %v; want ErrCopy", err)
			}
			own := install(t, dst, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Node: datacenter(l, 1)}, Leases: st, Leased: []string{"worker"}, NewNode: true})
			if !own.Reowned || own.Node == orig.Node || own.Lease.Value == orig.Lease.Value {
				t.Fatalf("the copy's own install = %+v; want another node value than the original's %v", own, orig.Node)
			}
			copyIDs := next(t, dst, indb.DefaultFunction, 5)
			checkIDs(t, l, own.Node, copyIDs)
			checkIDs(t, l, orig.Node, append(before, next(t, src, indb.DefaultFunction, 5)...))
			// Uninstalling the copy releases its own value, not the original's.
			if out, err := indb.Uninstall(ctx(t), dst, e, indb.UninstallOptions{Leases: st}); err != nil || !out.Released || out.Lease.Value != own.Lease.Value {
				t.Errorf("Uninstall on the copy = %+v, %v", out, err)
			}
		})
	}
}

func datacenter(l *layout.Layout, v int64) layout.NodeValues {
	nv, _ := l.ParseNodeValues(fmt.Sprintf("datacenter=%d", v))
	return nv
}

// copyDB copies the database of srcURL into a new one, in the way the case
// names, and returns a connection to the copy and one to the original (a new
// one when the copy needed the original's connections closed).
func copyDB(t *testing.T, how string, e indb.Engine, srcURL string, src *sql.DB) (*sql.DB, *sql.DB) {
	t.Helper()
	name := randName("flurry_indb_copy_")
	srcName := srcURL[strings.LastIndex(srcURL, "/")+1:]
	if i := strings.IndexByte(srcName, '?'); i >= 0 {
		srcName = srcName[:i]
	}
	svc := testenv.Postgres
	if e == indb.MariaDB {
		svc = testenv.MySQL
	}
	base := svc.URL(t)
	admin, _, _, err := indb.Open(ctx(t), base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		drop := "DROP DATABASE IF EXISTS " + name
		if e == indb.Postgres {
			drop += " WITH (FORCE)"
		}
		admin.ExecContext(ctx(t), drop)
		admin.Close()
	})
	switch how {
	case "postgres-template":
		// A template must have no other connection.
		src.Close()
		if _, err := admin.ExecContext(ctx(t), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+srcName+"' AND pid <> pg_backend_pid()"); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx(t), "CREATE DATABASE "+name+" TEMPLATE "+srcName); err != nil {
			t.Fatal(err)
		}
		_, src = openAt(t, base, srcName)
	case "postgres-dump":
		if _, err := admin.ExecContext(ctx(t), "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		conn := clientArgs(t, base, "-h", "-p", "-U", "PGPASSWORD")
		pipe(t, append(append([]string{tool(t, "pg_dump")}, conn...), srcName), append(append([]string{tool(t, "psql"), "-q", "-v", "ON_ERROR_STOP=1"}, conn...), "-d", name))
	case "mariadb-dump":
		if _, err := admin.ExecContext(ctx(t), "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		conn := clientArgs(t, base, "-h", "-P", "-u", "MYSQL_PWD")
		pipe(t, append(append([]string{tool(t, "mariadb-dump"), "--routines", "--triggers"}, conn...), srcName), append(append([]string{tool(t, "mariadb")}, conn...), name))
	}
	_, dst := openAt(t, base, name)
	return dst, src
}

// clientArgs returns the host, port and user flags of a client tool for the
// server of rawURL, and sets the password variable the tool reads.
func clientArgs(t *testing.T, rawURL, host, port, user, passEnv string) []string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{host, u.Hostname()}
	if u.Port() != "" {
		args = append(args, port, u.Port())
	}
	if u.User != nil {
		args = append(args, user, u.User.Username())
		if p, ok := u.User.Password(); ok {
			t.Setenv(passEnv, p)
		}
	}
	return args
}

// TestLeaseStoreWithoutPin refuses a store that cannot pin.
func TestLeaseStoreWithoutPin(t *testing.T) {
	_, db := freshDB(t, indb.Postgres)
	_, err := indb.Install(ctx(t), db, indb.InstallOptions{Options: indb.Options{Engine: indb.Postgres, Layout: mustLayout(t, "instagram")}, Leases: noPin{leases()}})
	if !errors.Is(err, indb.ErrOptions) || !strings.Contains(err.Error(), "Pinner") {
		t.Errorf("Install with a store that cannot pin: %v", err)
	}
}

type noPin struct{ lease.Store }

// TestCanceledMove cancels a call in the middle of a move of the counter (a
// statement timeout while TestClock's flurry.test_move_delay_ms holds it there):
// the advisory lock must not stay held, or every later move would wait for it.
func TestCanceledMove(t *testing.T) {
	_, db := freshDB(t, indb.Postgres)
	l := mustLayout(t, tiny)
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.Postgres, Layout: l, TestClock: true}})
	a, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	before := next(t, a, indb.DefaultFunction, 3)
	for _, q := range []string{"SELECT set_config('flurry.test_move_delay_ms', '5000', false)", "SET statement_timeout = 300"} {
		if _, err := a.ExecContext(ctx(t), q); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond) // the counter falls behind the clock: the next call moves it
	var id int64
	err = a.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id)
	if err == nil || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a call held in its move for 5 s under a 300 ms statement timeout = %d, %v; want a timeout", id, err)
	}
	// Another session moves the counter (it is behind again) within a few seconds.
	b, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.ExecContext(ctx(t), "SET lock_timeout = 5000"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	after := next(t, b, indb.DefaultFunction, 20)
	var held int
	if err := db.QueryRowContext(ctx(t), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&held); err != nil || held != 0 {
		t.Errorf("%d advisory locks (%v) held after the moves; want none", held, err)
	}
	checkIDs(t, l, in.Node, append(before, after...))
}

// TestGrant lets a role that owns nothing call the function (Options.Grants), and
// checks that without the grant it cannot.
func TestGrant(t *testing.T) {
	base := testenv.Postgres.URL(t)
	admin, _, _, err := indb.Open(ctx(t), base)
	if err != nil {
		t.Fatal(err)
	}
	role, other := randName("flurry_indb_role_"), randName("flurry_indb_role_")
	for _, r := range []string{role, other} {
		if _, err := admin.ExecContext(ctx(t), "CREATE ROLE "+r+" NOLOGIN"); err != nil {
			t.Fatal(err)
		}
	}
	// Registered before the database: cleanups run last first, and a role can be
	// dropped only once the database that grants it something is gone.
	t.Cleanup(func() {
		for _, r := range []string{role, other} {
			if _, err := admin.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+r); err != nil {
				t.Errorf("DROP ROLE %s: %v", r, err)
			}
		}
		admin.Close()
	})
	_, db := freshDB(t, indb.Postgres)
	l := mustLayout(t, "instagram")
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.Postgres, Layout: l, Grants: []string{role}}})
	c, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx(t), "SET ROLE "+role); err != nil {
		t.Fatal(err)
	}
	checkIDs(t, l, in.Node, next(t, c, indb.DefaultFunction, 3))
	if _, err := c.ExecContext(ctx(t), "SET ROLE "+other); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := c.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a role without the grant = %d, %v; want permission denied", id, err)
	}
	c.ExecContext(ctx(t), "RESET ROLE")
}

// TestRestartStartsAfterReservation empties MariaDB's MEMORY table of tick
// claims in the middle of a one-second tick, as a restart or a crash of the
// server does: the calls after it start after the crash-safe reservation, so
// they issue none of the IDs before it; with the clock behind the reservation
// they fail naming the gap, and succeed again with the clock back.
func TestRestartStartsAfterReservation(t *testing.T) {
	_, db := freshDB(t, indb.MariaDB)
	l := mustLayout(t, "time:33:1s:2024-01-01T00:00:00Z,node:4,seq:10")
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.MariaDB, Layout: l, TestClock: true}})
	conn := func() *sql.Conn {
		t.Helper()
		c, err := db.Conn(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// A restart ends every session (and its user variables): each phase has a
	// connection of its own.
	restart := func() {
		t.Helper()
		if _, err := db.ExecContext(ctx(t), "DELETE FROM "+indb.DefaultFunction+"_tick"); err != nil {
			t.Fatal(err)
		}
	}
	before := next(t, conn(), indb.DefaultFunction, 20)
	restart()
	c := conn()
	setOffset(t, c, indb.MariaDB, -5000)
	var id int64
	err := c.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id)
	if err == nil || !strings.Contains(err.Error(), "behind the last issued ID's tick") {
		t.Fatalf("a call after the restart with the clock 5 s behind = %d, %v; want a clock-behind error", id, err)
	}
	setOffset(t, c, indb.MariaDB, 0)
	after := next(t, c, indb.DefaultFunction, 20)
	restart()
	again := next(t, conn(), indb.DefaultFunction, 20)
	checkIDs(t, l, in.Node, append(append(before, after...), again...))
	for _, ids := range [][]flurry.ID{before, after, again}[1:] {
		if mustTick(t, l, ids[0]) <= mustTick(t, l, before[len(before)-1]) {
			t.Errorf("an ID after a restart, %d, is in the tick of an ID before it", ids[0])
		}
	}
}

// TestTriggerInlined checks MariaDB's trigger, which has the function's common
// call inlined: a row that gives its id keeps it, a row that leaves it NULL or 0
// gets an ID, and the trigger's IDs and the function's, taken in turn on one
// connection and in the same ticks, are unique and increase.
func TestTriggerInlined(t *testing.T) {
	_, db := freshDB(t, indb.MariaDB)
	if _, err := db.ExecContext(ctx(t), "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	// One-second ticks: the calls below share ticks, so the trigger's and the
	// function's common paths number the same tick.
	l := mustLayout(t, "time:33:1s:2024-01-01T00:00:00Z,node:4,seq:10")
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.MariaDB, Layout: l, Targets: []indb.Target{{Table: "items", Column: "id"}}}})
	c, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ids []flurry.ID
	for i := 0; i < 30; i++ {
		q := fmt.Sprintf("INSERT INTO items (v) VALUES (%d)", i)
		switch i % 3 {
		case 1:
			q = fmt.Sprintf("INSERT INTO items (id, v) VALUES (NULL, %d)", i)
		case 2:
			q = fmt.Sprintf("INSERT INTO items (id, v) VALUES (0, %d)", i)
		}
		if _, err := c.ExecContext(ctx(t), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var id int64
		if err := c.QueryRowContext(ctx(t), fmt.Sprintf("SELECT id FROM items WHERE v = %d", i)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, flurry.ID(id))
		ids = append(ids, next(t, c, indb.DefaultFunction, 1)...)
	}
	checkIDs(t, l, in.Node, ids)
	if _, err := c.ExecContext(ctx(t), "INSERT INTO items (id, v) VALUES (12345, 1000)"); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := c.QueryRowContext(ctx(t), "SELECT id FROM items WHERE v = 1000").Scan(&id); err != nil || id != 12345 {
		t.Errorf("a row that gave id 12345 has id %d (%v); want it kept", id, err)
	}
}

func mustTick(t *testing.T, l *layout.Layout, id flurry.ID) int64 {
	t.Helper()
	p, err := l.Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Tick
}

// TestKilledMove ends a PostgreSQL backend in the middle of a move of the counter
// (pg_terminate_backend while TestClock's flurry.test_move_delay_ms holds it
// between its slot and its setval, with the advisory lock): another session that
// waited for the lock goes on, and no ID is issued twice across the kill.
func TestKilledMove(t *testing.T) {
	_, db := freshDB(t, indb.Postgres)
	l := mustLayout(t, tiny)
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.Postgres, Layout: l, TestClock: true}})
	a, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before := append(next(t, a, indb.DefaultFunction, 3), next(t, b, indb.DefaultFunction, 3)...)
	var pid int
	if err := a.QueryRowContext(ctx(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx(t), "SELECT set_config('flurry.test_move_delay_ms', '30000', false)"); err != nil {
		t.Fatal(err)
	}
	killed := make(chan error, 1)
	go func() {
		var id int64
		// The counter is behind the clock once a tick has passed: this call moves it.
		killed <- a.QueryRowContext(ctx(t), "SELECT pg_sleep(0.01), "+indb.DefaultFunction+"()").Scan(new(any), &id)
	}()
	// Wait until A sleeps inside its move (the second pg_sleep of its statement).
	deadline := time.Now().Add(20 * time.Second)
	for {
		var held int
		if err := db.QueryRowContext(ctx(t), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1", pid).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if held > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session never entered a move")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := b.ExecContext(ctx(t), "SET lock_timeout = 20000"); err != nil {
		t.Fatal(err)
	}
	// B's calls wait for the lock A holds, then go on once A is gone.
	type result struct {
		ids []flurry.ID
		err error
	}
	after := make(chan result, 1)
	go func() {
		var r result
		for i := 0; i < 20 && r.err == nil; i++ {
			var id int64
			r.err = b.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id)
			r.ids = append(r.ids, flurry.ID(id))
		}
		after <- r
	}()
	if _, err := db.ExecContext(ctx(t), "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if err := <-killed; err == nil {
		t.Fatal("the killed session's call returned an ID")
	}
	r := <-after
	if r.err != nil {
		t.Fatalf("a call after the kill: %v", r.err)
	}
	checkIDs(t, l, in.Node, append(before, r.ids...))
}
