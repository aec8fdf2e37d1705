package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// fillScope gives scope a row for each value, in one transaction.
func fillScope(t *testing.T, s *Store, scope string, values []int64) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.h.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if _, err := tx.ExecContext(ctx, s.q.insert, scope, v, "gap-test", fmt.Sprintf("t%d", v), int64(60_000)); err != nil {
			_ = tx.Rollback()
			t.Fatalf("insert %s/%d: %v", scope, v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func span(lo, hi int64) []int64 { // [lo, hi)
	var out []int64
	for v := lo; v < hi; v++ {
		out = append(out, v)
	}
	return out
}

// The search for a value without a row, on each engine: the first gap from the
// place on, else from 0, else none.
func TestFirstGap(t *testing.T) {
	engines := map[string]func(t *testing.T) string{
		"SQLite":   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "gap.db") },
		"Postgres": func(t *testing.T) string { return testenv.Postgres.URL(t) },
		"MySQL":    func(t *testing.T) string { return testenv.MySQL.URL(t) },
	}
	const size = 16
	cases := []struct {
		name   string
		values []int64
		from   int64
		want   int64
	}{
		{"empty scope", nil, 0, 0},
		{"empty scope, from 7", nil, 7, 7},
		{"above a run", span(0, 3), 0, 3},
		{"a gap in the middle", append(span(0, 3), 5, 6), 1, 3},
		{"the place has no row", append(span(0, 3), 5, 6), 3, 3},
		{"after the gap", append(span(0, 3), 5, 6), 5, 7},
		{"the last value", span(0, 15), 15, 15},
		{"full from the place on: from 0", span(1, size), 5, 0},
		{"full from the place on: the first gap below", append(span(0, 4), span(6, size)...), 9, 4},
		{"every value has a row", span(0, size), 7, -1},
		{"every value has a row, from 0", span(0, size), 0, -1},
	}
	for name, url := range engines {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, url(t))
			t.Cleanup(func() { s.Close() })
			base := fmt.Sprintf("gap-%d", time.Now().UnixNano())
			for i, tc := range cases {
				scope := fmt.Sprintf("%s-%d", base, i)
				fillScope(t, s, scope, tc.values)
				got, err := s.firstGap(context.Background(), scope, tc.from, size)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got != tc.want {
					t.Errorf("%s: rows %v, from %d: got %d, want %d", tc.name, tc.values, tc.from, got, tc.want)
				}
			}
			del := "DELETE FROM " + s.Table() + " WHERE scope LIKE ?"
			if s.Dialect() == Postgres {
				del = strings.Replace(del, "?", "$1", 1)
			}
			if _, err := s.h.DB.ExecContext(context.Background(), del, base+"-%"); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
}

// On PostgreSQL the gap search is one ordered pass over the scope's rows, whatever
// the planner believes of the table: here its statistics were taken before the
// scope had a row, while the table held 500 scopes of one row (autovacuum off), as
// when a new fleet grows faster than ANALYZE runs. A search that joins the scope with itself was planned as a nested loop
// reading the whole scope per row (at 9,497 rows one search took 459 s, and every
// connection of a pool was in one). The bound is on buffers read, not time: the
// single pass reads about a buffer per row (each row's heap page, the visibility
// map not being set), the nested loop about a row's worth per row.
func TestFirstGapStaleStatistics(t *testing.T) {
	url := testenv.Postgres.URL(t)
	ctx := context.Background()
	table := fmt.Sprintf("flurry_leases_gap_%d", time.Now().UnixNano()%1_000_000_000)
	s, err := openURL(ctx, url, Options{Table: table})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		_, _ = s.h.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
		_, _ = s.h.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+table+"_identity")
		s.Close()
	})
	if _, err := s.h.DB.ExecContext(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	// 500 scopes of one row each when ANALYZE runs, then a new scope of 2,000.
	tx, err := s.h.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if _, err := tx.ExecContext(ctx, s.q.insert, fmt.Sprintf("small-%d", i), int64(0), "gap-test", "t", int64(60_000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.h.DB.ExecContext(ctx, "ANALYZE "+table); err != nil {
		t.Fatal(err)
	}
	const rows = 2000
	scope := "stale"
	fillScope(t, s, scope, span(0, rows))

	conn, err := s.h.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bad plan must not hold the test for minutes: 60 s is hundreds of times what
	// the single pass needs, and a fraction of what the nested loop did.
	if _, err := conn.ExecContext(ctx, "SET statement_timeout = 60000"); err != nil {
		t.Fatal(err)
	}
	var plan string
	err = conn.QueryRowContext(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+s.q.missing, scope, int64(0), scope, int64(0), int64(1<<16)).Scan(&plan)
	if err != nil {
		t.Fatalf("the gap search on %d rows with stale statistics: %v (a plan that reads the scope once per row?)", rows, err)
	}
	var out []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &out); err != nil || len(out) != 1 {
		t.Fatalf("EXPLAIN's JSON: %v: %.500s", err, plan)
	}
	if got := out[0].Plan.Hit + out[0].Plan.Read; got > 4*rows {
		t.Errorf("the gap search read %d buffers for a scope of %d rows; want at most %d (one ordered pass). Plan:\n%s", got, rows, 4*rows, plan)
	}
	if got, err := s.firstGap(ctx, scope, 0, 1<<16); err != nil || got != rows {
		t.Errorf("firstGap: %d, %v; want %d", got, err, rows)
	}
}
