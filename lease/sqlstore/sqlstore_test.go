package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// testTable keeps the tests' rows apart from a real flurry_leases table in the same
// database; the suite's scopes are unique, so runs can share it.
const testTable = "flurry_leases_test"

func openStore(t *testing.T, rawURL string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := openURL(ctx, rawURL, Options{Table: testTable})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func conformance(t *testing.T, rawURL string) {
	leasetest.Run(t, func(t *testing.T) lease.Store { return openStore(t, rawURL) })
}

func TestConformancePostgres(t *testing.T) { conformance(t, testenv.Postgres.URL(t)) }

func TestConformanceMySQL(t *testing.T) { conformance(t, testenv.MySQL.URL(t)) }

// TestConformanceSQLite opens a new *sql.DB on one file for every store the suite
// asks for, so its racing acquirers behave as separate processes would.
func TestConformanceSQLite(t *testing.T) {
	conformance(t, "sqlite://"+filepath.Join(t.TempDir(), "leases.db"))
}

// TestSQLiteTwoHandles checks by hand that two stores on one file see each other's
// leases and marks, as two processes would.
func TestSQLiteTwoHandles(t *testing.T) {
	ctx := context.Background()
	u := "sqlite://" + filepath.Join(t.TempDir(), "leases.db")
	a, b := openStore(t, u), openStore(t, u)
	defer a.Close()
	defer b.Close()
	scope := leasetest.Scope(t)
	la, err := a.Acquire(ctx, scope, 2, "a", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Acquire(ctx, scope, 2, "b", 2*time.Second)
	if err != nil || lb.Value == la.Value {
		t.Fatalf("second handle got %+v, %v; the first holds %d", lb, err, la.Value)
	}
	if _, err := b.Acquire(ctx, scope, 2, "c", 2*time.Second); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Fatalf("third acquire: %v", err)
	}
	if err := a.Release(ctx, la, 1234); err != nil {
		t.Fatal(err)
	}
	lc, err := b.Acquire(ctx, scope, 2, "c", 2*time.Second)
	if err != nil || lc.Value != la.Value || lc.Mark != 1234 {
		t.Fatalf("after release by the other handle: %+v, %v", lc, err)
	}
	var mode string
	if err := a.DB().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// engines lists the engines, each with a function that returns its URL or skips.
func engines() []struct {
	name string
	url  func(t *testing.T) string
} {
	return []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"Postgres", func(t *testing.T) string { return testenv.Postgres.URL(t) }},
		{"MySQL", func(t *testing.T) string { return testenv.MySQL.URL(t) }},
		{"SQLite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "leases.db") }},
	}
}

// TestExpiryByDatabaseClock checks that expiry follows the database's clock: the
// stored expiry of a fresh lease is ttl after the database's now, and a lease the
// database sees as expired is lost although the client's clock says it has seconds
// left, as with a database clock ahead of the client's.
func TestExpiryByDatabaseClock(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, e.url(t))
			defer s.Close()
			scope := leasetest.Scope(t)
			// The expiry is the database's now at the Acquire plus the TTL: between
			// its now just before and just after (however long the call takes).
			dbNow := func() int64 {
				var ms int64
				if err := s.DB().QueryRowContext(ctx, "SELECT "+s.Dialect().nowMs()).Scan(&ms); err != nil {
					t.Fatal(err)
				}
				return ms
			}
			before := dbNow()
			l, err := s.Acquire(ctx, scope, 1, "a", 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			after := dbNow()
			if e := l.Expires.UnixMilli() - 3000; e < before-1 || e > after+1 { // 1 ms for rounding
				t.Errorf("expiry %d ms is not 3000 ms after the database's now during the Acquire (%d to %d)", l.Expires.UnixMilli(), before, after)
			}
			if d := time.Since(time.UnixMilli(after)); d > time.Second || d < -time.Second {
				t.Logf("the database's clock is %v behind this machine's", d)
			}
			if l.Expires.Location() != time.UTC {
				t.Errorf("Expires in %v; want UTC", l.Expires.Location())
			}
			if l, err = s.Renew(ctx, l, 3*time.Second, 5000); err != nil {
				t.Fatal(err)
			}
			shift := "UPDATE " + s.Table() + " SET expires_ms = expires_ms - 3000 WHERE scope = ?"
			if s.Dialect() == Postgres {
				shift = sqlconn.Dollars(shift)
			}
			if _, err := s.DB().ExecContext(ctx, shift, scope); err != nil {
				t.Fatal(err)
			}
			recs, err := s.List(ctx, scope)
			if err != nil || len(recs) != 1 || recs[0].Held || recs[0].Owner != "" || recs[0].Token != "" || !recs[0].Expires.IsZero() || recs[0].Mark != 5000 {
				t.Errorf("List = %+v, %v", recs, err)
			}
			if _, err := s.Renew(ctx, l, time.Second, 6000); !errors.Is(err, lease.ErrLost) {
				t.Errorf("Renew of a lease the database sees as expired: %v", err)
			}
			// Only the live lease's Release may lower the mark.
			if err := s.Release(ctx, l, 1); !errors.Is(err, lease.ErrLost) {
				t.Errorf("Release of a lease the database sees as expired: %v", err)
			}
			l2, err := s.Acquire(ctx, scope, 1, "b", time.Second)
			if err != nil || l2.Value != l.Value || l2.Mark != 5000 {
				t.Errorf("Acquire after expiry = %+v, %v", l2, err)
			}
		})
	}
}

// TestConcurrentOpen opens 16 stores at once on a table that does not exist yet, as
// processes starting together on a new database do.
func TestConcurrentOpen(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			u := e.url(t)
			table := fmt.Sprintf("flurry_leases_open_%d", time.Now().UnixNano())
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					s, err := openURL(ctx, u, Options{Table: table})
					if err != nil {
						t.Error(err)
						return
					}
					defer s.Close()
					if _, err := s.Acquire(ctx, "s", 16, "o", time.Second); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			s := openStore(t, u)
			defer s.Close()
			if _, err := s.DB().Exec("DROP TABLE " + table); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestNew covers a store on the caller's *sql.DB: the table is made on first use and
// Close leaves the handle open.
func TestNew(t *testing.T) {
	ctx := context.Background()
	o, err := ParseURL("sqlite://" + filepath.Join(t.TempDir(), "leases.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(o.Connector)
	defer db.Close()
	if _, err := New(nil, SQLite, Options{}); err == nil {
		t.Error("New(nil) accepted")
	}
	if _, err := New(db, 0, Options{}); err == nil {
		t.Error("New with the zero Dialect accepted")
	}
	if _, err := New(db, SQLite, Options{Table: "x; DROP TABLE y"}); err == nil {
		t.Error("New accepted a bad table name")
	}
	skip, err := New(db, SQLite, Options{Table: "absent", SkipCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skip.List(ctx, "s"); err == nil {
		t.Error("SkipCreate with no table: List succeeded")
	}
	s, err := New(db, SQLite, Options{})
	if err != nil || s.Table() != DefaultTable || s.Dialect() != SQLite {
		t.Fatalf("New = %+v, %v", s, err)
	}
	if _, err := s.Acquire(ctx, "s", 1, "a", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("Close closed the caller's *sql.DB: %v", err)
	}
}

// TestManyAcquirers runs more acquirers than the suite does, each on its own
// connection pool, on every engine that answers: all of a pool of 24 goes to 24 of
// 48 acquirers, and no value twice.
func TestManyAcquirers(t *testing.T) {
	for _, tc := range engines() {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url(t)
			const acquirers, size = 48, 24
			stores := make([]*Store, acquirers)
			for i := range stores {
				stores[i] = openStore(t, u)
				defer stores[i].Close()
				// One connection each is all an Acquire uses at a time; the cap keeps
				// the test within a server's connection limit (PostgreSQL's 100 by
				// default) while other packages' tests use the same server.
				stores[i].DB().SetMaxOpenConns(1)
			}
			scope := leasetest.Scope(t)
			var (
				mu   sync.Mutex
				won  = map[int64]bool{}
				full int
				wg   sync.WaitGroup
			)
			start := make(chan struct{})
			for _, s := range stores {
				wg.Go(func() {
					<-start
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					l, err := s.Acquire(ctx, scope, size, "racer", time.Minute) // a TTL far above the test's run time: an expiry under load would hand a value on, rightly
					mu.Lock()
					defer mu.Unlock()
					switch {
					case errors.Is(err, lease.ErrNoFreeValue):
						full++
					case err != nil:
						t.Errorf("Acquire: %v", err)
					case won[l.Value]:
						t.Errorf("value %d given twice", l.Value)
					default:
						won[l.Value] = true
					}
				})
			}
			close(start)
			wg.Wait()
			if len(won) != size || full != acquirers-size {
				t.Errorf("%d winners and %d ErrNoFreeValue; want %d and %d", len(won), full, size, acquirers-size)
			}
		})
	}
}

// TestEpochColumnAdded opens a store on a table in the form of a flurry from before
// epochs, with a held value and a free one in it: Open adds the epoch column, the
// rows count from 0, and every write counts one more. With SkipCreate the old table
// is refused, naming the columns.
func TestEpochColumnAdded(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			u := e.url(t)
			table := fmt.Sprintf("flurry_leases_old_%d", time.Now().UnixNano())
			admin := openStore(t, u)
			defer admin.Close()
			d := admin.Dialect()
			old := regexp.MustCompile(`(?m)^\tepoch .*\n`).ReplaceAllString(d.ddl(table), "")
			if strings.Contains(old, "epoch") {
				t.Fatalf("the old table form still has the epoch column:\n%s", old)
			}
			if _, err := admin.DB().ExecContext(ctx, old); err != nil {
				t.Fatal(err)
			}
			defer admin.DB().Exec("DROP TABLE " + table)
			q := d.queries(table)
			// As an older flurry left them: value 0 held by a live lease, value 1 free.
			ins := "INSERT INTO " + table + " (scope, value, owner, token, expires_ms, mark, updated_ms) VALUES (?, ?, ?, ?, " + d.nowMs() + " + ?, ?, 0)"
			sqlconn.Placeholders(sqlconn.Engine(d), &ins)
			if _, err := admin.DB().ExecContext(ctx, ins, "s", 0, "old", "oldtoken", 60000, 500); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.DB().ExecContext(ctx, ins, "s", 1, "", "", -1000, 700); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.DB().QueryContext(ctx, q.epoch.Probe); err == nil {
				t.Fatal("the old table has an epoch column")
			}
			if skip, err := openURL(ctx, u, Options{Table: table, SkipCreate: true}); err == nil || !strings.Contains(err.Error(), "lacks the column epoch, which this flurry needs: add it with ALTER TABLE "+table+" ADD COLUMN epoch") {
				if err == nil {
					skip.Close()
				}
				t.Errorf("Open with SkipCreate on a table without epoch: %v; want the missing columns named", err)
			}

			s, err := openURL(ctx, u, Options{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			recs, err := s.List(ctx, "s")
			if err != nil || len(recs) != 2 || recs[0].Epoch != 0 || recs[1].Epoch != 0 || !recs[0].Held || recs[1].Mark != 700 {
				t.Fatalf("List of the old rows = %+v, %v; want both at epoch 0, value 0 held", recs, err)
			}
			if _, err := admin.DB().QueryContext(ctx, q.epoch.Probe); err != nil {
				t.Fatalf("Open did not add the epoch column: %v", err)
			}
			n, err := s.Takeover(ctx, lease.Lease{Scope: "s", Value: 0, Token: "oldtoken"}, "new", 2*time.Second, 900)
			if err != nil || n.Epoch != 1 || n.Mark != 500 {
				t.Fatalf("Takeover of an old row = %+v, %v; want epoch 1, mark 500", n, err)
			}
			l, err := s.AcquireValue(ctx, "s", 1, "b", 2*time.Second)
			if err != nil || l.Epoch != 1 || l.Mark != 700 {
				t.Fatalf("AcquireValue of an old free row = %+v, %v; want epoch 1, mark 700", l, err)
			}
			if l, err = s.Renew(ctx, l, 2*time.Second, 800); err != nil || l.Epoch != 2 {
				t.Fatalf("Renew = %+v, %v; want epoch 2", l, err)
			}
			fresh, err := s.AcquireValue(ctx, "s", 5, "c", 2*time.Second)
			if err != nil || fresh.Epoch != 1 {
				t.Fatalf("AcquireValue of a value without a row = %+v, %v; want epoch 1", fresh, err)
			}
			// A second store on the migrated table adds nothing and works.
			again, err := openURL(ctx, u, Options{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if recs, err := again.List(ctx, "s"); err != nil || len(recs) != 3 || recs[1].Epoch != 2 {
				t.Fatalf("List by a second store = %+v, %v", recs, err)
			}
		})
	}
}
