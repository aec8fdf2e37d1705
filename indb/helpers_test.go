package indb_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/verify/testenv"
)

var engines = []indb.Engine{indb.Postgres, indb.MariaDB}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// serverConn takes a connection of db for a session of its own. The server's
// connection limit (max_connections, 100 by default on both engines) is shared by
// every client of the server, other packages' tests and other programs among them:
// when it has none left, serverConn waits for one, until ctx ends, instead of
// failing the test for what another client holds.
func serverConn(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	for {
		c, err := db.Conn(ctx)
		if err == nil || !tooManyConnections(err) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the server had no connection free until the test's deadline: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tooManyConnections reports whether err is the server's refusal of a connection
// past its limit: PostgreSQL's SQLSTATE 53300, MariaDB's error 1040.
func tooManyConnections(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "53300"
	}
	var my *mysql.MySQLError
	return errors.As(err, &my) && my.Number == 1040
}

func randName(prefix string) string {
	var b [5]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// freshDB makes an empty database named flurry_indb_<random> on the engine and
// returns its URL and a connection; both go away when the test ends.
func freshDB(t testing.TB, e indb.Engine) (string, *sql.DB) {
	t.Helper()
	svc := testenv.Postgres
	if e == indb.MariaDB {
		svc = testenv.MySQL
	}
	base := svc.URL(t)
	name := randName("flurry_indb_")
	admin, _, _, err := indb.Open(ctx(t), base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx(t), "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("CREATE DATABASE %s: %v", name, err)
	}
	t.Cleanup(func() {
		drop := "DROP DATABASE IF EXISTS " + name
		if e == indb.Postgres {
			drop += " WITH (FORCE)"
		}
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(c, drop); err != nil {
			t.Errorf("%s: %v", drop, err)
		}
		admin.Close()
	})
	return openAt(t, base, name)
}

// openAt returns the URL of database name on the server of base, and a connection.
func openAt(t testing.TB, base, name string) (string, *sql.DB) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	db, _, _, err := indb.Open(ctx(t), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return u.String(), db
}

func mustLayout(t testing.TB, s string) *layout.Layout {
	t.Helper()
	l, err := layout.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// leases returns an in-memory lease store shared by a test's databases.
func leases() lease.Store { return memstore.New(clock.NewSystem()) }

func install(t *testing.T, db *sql.DB, o indb.InstallOptions) indb.Installed {
	t.Helper()
	if o.Leases == nil {
		o.Leases = leases()
	}
	if o.LeaseName == "" {
		o.LeaseName = "memory"
	}
	in, err := indb.Install(ctx(t), db, o)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	return in
}

// next calls the function n times on one connection and returns the IDs.
func next(t *testing.T, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, fn string, n int) []flurry.ID {
	t.Helper()
	var out []flurry.ID
	for i := 0; i < n; i++ {
		var id int64
		if err := c.QueryRowContext(ctx(t), "SELECT "+fn+"()").Scan(&id); err != nil {
			t.Fatalf("SELECT %s(): %v", fn, err)
		}
		out = append(out, flurry.ID(id))
	}
	return out
}

// checkIDs checks that ids are unique, decode with the layout and the node
// values, and (per session, in issue order) increase.
func checkIDs(t *testing.T, l *layout.Layout, nv layout.NodeValues, sessions ...[]flurry.ID) int {
	t.Helper()
	seen := map[flurry.ID]int{}
	n := 0
	for s, ids := range sessions {
		for i, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("ID %d issued twice (sessions %d and %d)", id, prev, s)
			}
			seen[id] = s
			p, err := l.Decompose(id)
			if err != nil {
				t.Fatalf("ID %d: %v", id, err)
			}
			if p.Nodes != nv {
				t.Fatalf("ID %d has node values %v; want %v", id, p.Nodes, nv)
			}
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("session %d: ID %d after %d: not increasing", s, id, ids[i-1])
			}
			n++
		}
	}
	return n
}

// sqlErr runs q and returns its error, which must not be nil.
func sqlErr(t *testing.T, db *sql.DB, q string) error {
	t.Helper()
	var v int64
	err := db.QueryRowContext(ctx(t), q).Scan(&v)
	if err == nil {
		t.Fatalf("%s = %d; want an error", q, v)
	}
	return err
}

func tool(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		if testenv.Required() {
			t.Fatalf("%s not installed; FLURRY_TEST_REQUIRE=1 makes this a failure", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// pipe runs dump | restore, both with their arguments.
func pipe(t *testing.T, dump, restore []string) {
	t.Helper()
	d := exec.Command(dump[0], dump[1:]...)
	r := exec.Command(restore[0], restore[1:]...)
	out, err := d.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Stdin = out
	var rerr strings.Builder
	r.Stderr = &rerr
	var derr strings.Builder
	d.Stderr = &derr
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := d.Run(); err != nil {
		t.Fatalf("%s: %v: %s", dump[0], err, derr.String())
	}
	if err := r.Wait(); err != nil {
		t.Fatalf("%s: %v: %s", restore[0], err, rerr.String())
	}
}

func isCopy(err error) bool { return errors.Is(err, indb.ErrCopy) }

// serverConn waits while the server refuses a connection past a limit, and
// tooManyConnections knows PostgreSQL's refusal: a role whose connection limit is 0
// gets the same SQLSTATE 53300 as a server that is full.
func TestServerConnWaitsForALimit(t *testing.T) {
	base := testenv.Postgres.URL(t)
	admin, _, _, err := indb.Open(ctx(t), base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	role := randName("flurry_limit_")
	if _, err := admin.ExecContext(ctx(t), "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 0"); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+role)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db, _, _, err := indb.Open(ctx(t), u.String())
	if err == nil {
		defer db.Close()
		_, err = db.Conn(ctx(t))
	}
	if !tooManyConnections(err) {
		t.Fatalf("a connection past the role's limit of 0: %v; want SQLSTATE 53300 recognised", err)
	}
	db, err = sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// It must wait until the deadline (short is done when it returns), then fail:
	// with the refusal, or, when the deadline fell inside a connection attempt (the
	// server slow to answer on a loaded machine), with the deadline itself.
	c, err := serverConn(short, db)
	waited := short.Err() != nil
	if err == nil || !waited || !strings.Contains(err.Error(), "no connection free") && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("serverConn within a limit of 0: %v, %v (deadline passed: %v); want a wait until the deadline, then the refusal", c, err, waited)
	}
	if _, err := admin.ExecContext(ctx(t), "ALTER ROLE "+role+" CONNECTION LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	c, err = serverConn(ctx(t), db)
	if err != nil {
		t.Fatalf("serverConn once the limit allows one: %v", err)
	}
	c.Close()
}
