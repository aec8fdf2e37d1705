package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

// testTable keeps the tests' rows apart from a real flurry_segment table in the same
// database; the tests' tags are unique, so runs can share it.
const testTable = "flurry_segment_test"

// engine is one engine the tests run on, with a function that returns its URL or
// skips (fails with FLURRY_TEST_REQUIRE=1).
type engine struct {
	name string
	url  func(t testing.TB) string
}

func engines() []engine {
	return []engine{
		{"Postgres", func(t testing.TB) string { return testenv.Postgres.URL(t) }},
		{"MySQL", func(t testing.TB) string { return testenv.MySQL.URL(t) }},
		{"SQLite", func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "segments.db") }},
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openStore opens a store with its own *sql.DB, closed when the test ends.
func openStore(t testing.TB, rawURL string, opts Options) *Store {
	t.Helper()
	if opts.Table == "" && !strings.Contains(rawURL, "table=") {
		opts.Table = testTable
	}
	s, err := openURL(testCtx(t), rawURL, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withTable adds table=name to a URL's query.
func withTable(rawURL, name string) string {
	if strings.Contains(rawURL, "?") {
		return rawURL + "&table=" + name
	}
	return rawURL + "?table=" + name
}

// exec runs a statement written with ? placeholders on any engine.
func exec(t testing.TB, s *Store, query string, args ...any) {
	t.Helper()
	if s.Dialect() == Postgres {
		query = sqlconn.Dollars(query)
	}
	if _, err := s.DB().ExecContext(testCtx(t), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// maxID reads a tag's max_id as Leaf would.
func maxID(t testing.TB, s *Store, tag string) int64 {
	t.Helper()
	query := "SELECT max_id FROM " + s.Table() + " WHERE biz_tag = ?"
	if s.Dialect() == Postgres {
		query = sqlconn.Dollars(query)
	}
	var id int64
	if err := s.DB().QueryRowContext(testCtx(t), query, tag).Scan(&id); err != nil {
		t.Fatalf("read max_id of %s: %v", tag, err)
	}
	return id
}

// newTag creates a fresh tag with the given start and step.
func newTag(t testing.TB, s *Store, start, step int64) string {
	t.Helper()
	tag := segmenttest.TagName(t)
	if err := s.Create(testCtx(t), segment.Tag{Name: tag, Max: start, Step: step}); err != nil {
		t.Fatalf("Create(%s): %v", tag, err)
	}
	return tag
}

func findTag(t testing.TB, s *Store, tag string) segment.Tag {
	t.Helper()
	tags, err := s.Tags(testCtx(t))
	if err != nil {
		t.Fatalf("Tags: %v", err)
	}
	for _, x := range tags {
		if x.Name == tag {
			return x
		}
	}
	t.Fatalf("Tags does not list %s", tag)
	return segment.Tag{}
}

func conformance(t *testing.T, rawURL string) {
	segmenttest.Run(t, func(t *testing.T) segment.Store { return openStore(t, rawURL, Options{}) })
}

func TestConformancePostgres(t *testing.T) { conformance(t, testenv.Postgres.URL(t)) }

func TestConformanceMySQL(t *testing.T) { conformance(t, testenv.MySQL.URL(t)) }

// TestConformanceSQLite opens a new *sql.DB on one file for every store the suite
// asks for, so its racing takers behave as separate processes would.
func TestConformanceSQLite(t *testing.T) {
	conformance(t, "sqlite://"+filepath.Join(t.TempDir(), "segments.db"))
}

// leafDDL is Leaf's CREATE TABLE for leaf_alloc (MySQL, from Leaf's README), and the
// same columns in the other engines' words.
func leafDDL(d Dialect, table string) string {
	switch d {
	case MySQL:
		return "CREATE TABLE " + table + " (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', step int(11) NOT NULL," +
			" description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP," +
			" PRIMARY KEY (biz_tag)) ENGINE=InnoDB"
	case Postgres:
		return "CREATE TABLE " + table + " (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint NOT NULL DEFAULT 1, step int NOT NULL," +
			" description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag))"
	default:
		return "CREATE TABLE " + table + " (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', step int(11) NOT NULL," +
			" description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag))"
	}
}

// leafTable makes a Leaf table with Leaf's own example row, under a fresh name
// dropped when the test ends, and returns a store on it opened by ?table=.
func leafTable(t *testing.T, rawURL string) *Store {
	b := make([]byte, 4)
	rand.Read(b)
	table := "leaf_alloc_" + hex.EncodeToString(b)
	admin := openStore(t, rawURL, Options{})
	exec(t, admin, leafDDL(admin.Dialect(), table))
	t.Cleanup(func() {
		for _, x := range []string{table, table + "_returned"} {
			if _, err := admin.DB().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+x); err != nil {
				t.Errorf("drop %s: %v", x, err)
			}
		}
	})
	// As Leaf's README has it.
	exec(t, admin, "insert into "+table+"(biz_tag, max_id, step, description) values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')")
	return openStore(t, withTable(rawURL, table), Options{})
}

// leafTake does what a Leaf server does for a new segment, in one transaction:
// UPDATE leaf_alloc SET max_id = max_id + step, then read max_id and step; Leaf
// then issues max_id-step to max_id-1.
func leafTake(ctx context.Context, s *Store, tag string) (segment.Block, error) {
	update := "UPDATE " + s.Table() + " SET max_id = max_id + step WHERE biz_tag = ?"
	read := "SELECT max_id, step FROM " + s.Table() + " WHERE biz_tag = ?"
	if s.Dialect() == Postgres {
		update, read = sqlconn.Dollars(update), sqlconn.Dollars(read)
	}
	var b segment.Block
	err := sqlconn.Retry(ctx, func() error {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, update, tag); err != nil {
			return err
		}
		var maxID, step int64
		if err := tx.QueryRowContext(ctx, read, tag).Scan(&maxID, &step); err != nil {
			return err
		}
		b = segment.Block{First: maxID - step, Last: maxID - 1, Step: step}
		return tx.Commit()
	})
	return b, err
}

// noOverlap fails the test if two blocks share a value.
func noOverlap(t *testing.T, blocks []segment.Block) int64 {
	t.Helper()
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].First < blocks[j].First })
	var total int64
	for i, b := range blocks {
		if i > 0 && b.First <= blocks[i-1].Last {
			t.Fatalf("blocks overlap: %+v and %+v", blocks[i-1], b)
		}
		total += b.Len()
	}
	return total
}

// TestLeafTable serves a table made with Leaf's DDL and row, and shares it with a
// simulated Leaf server.
func TestLeafTable(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := e.url(t)
			s := leafTable(t, u)
			const tag = "leaf-segment-test"
			got := findTag(t, s, tag)
			if got.Max != 0 || got.Step != 2000 || got.Description != "Test leaf Segment Mode Get Id" || got.Returned != 0 || got.Updated.IsZero() {
				t.Fatalf("Leaf's row listed as %+v; want Max 0, Step 2000, the description, an update time", got)
			}
			b, err := s.Take(ctx, tag, 2000, 0, 0)
			if err != nil || b.First != 1 || b.Last != 2000 || b.Step != 2000 {
				t.Fatalf("Take(2000) = %+v, %v; want 1..2000", b, err)
			}
			if id := maxID(t, s, tag); id != 2001 {
				t.Fatalf("max_id %d after taking 1..2000; Leaf would leave 2001", id)
			}
			lb, err := leafTake(ctx, s, tag)
			if err != nil || lb.First != 2001 || lb.Last != 4000 {
				t.Fatalf("Leaf's next segment %+v, %v; want 2001..4000", lb, err)
			}
			if got := findTag(t, s, tag); got.Max != 4000 {
				t.Fatalf("Max %d after Leaf took 2001..4000", got.Max)
			}

			// Leaf servers and flurry takers at once, each flurry taker with its own
			// connections.
			blocks := []segment.Block{b, lb}
			var (
				mu sync.Mutex
				wg sync.WaitGroup
			)
			keep := func(b segment.Block, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				blocks = append(blocks, b)
			}
			for range 2 {
				wg.Go(func() {
					for range 10 {
						keep(leafTake(ctx, s, tag))
					}
				})
			}
			for i := range 4 {
				taker := openStore(t, withTable(u, s.Table()), Options{})
				wg.Go(func() {
					var floor int64
					for j := range 10 {
						b, err := taker.Take(ctx, tag, int64(1+(i*7+j*13)%500), floor, 0)
						if err == nil && b.First <= floor {
							t.Errorf("block %+v not above floor %d", b, floor)
						}
						floor = b.Last
						keep(b, err)
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			total := noOverlap(t, blocks)
			got = findTag(t, s, tag)
			if got.Max != total || maxID(t, s, tag) != total+1 {
				t.Fatalf("Max %d (max_id %d), but the blocks hold 1..%d", got.Max, maxID(t, s, tag), total)
			}
		})
	}
}

// TestLeafNarrowStep: Leaf's step column is INT; a step that does not fit is
// refused with the fix, and the row keeps its step.
func TestLeafNarrowStep(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			s := leafTable(t, e.url(t))
			const tag = "leaf-segment-test"
			err := s.SetStep(testCtx(t), tag, 1<<40)
			if e.name == "SQLite" {
				// SQLite's INT column keeps 64 bits.
				if err != nil {
					t.Fatalf("SetStep(2^40) on SQLite: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "ALTER TABLE") {
				t.Fatalf("SetStep(2^40) on an INT column: %v; want the ALTER TABLE that widens it", err)
			}
			if got := findTag(t, s, tag); got.Step != 2000 {
				t.Fatalf("step %d after a refused SetStep", got.Step)
			}
			if err := s.Create(testCtx(t), segment.Tag{Name: segmenttest.TagName(t), Step: 1 << 33}); err == nil {
				t.Fatalf("Create with step 2^33 on an INT column accepted")
			}
		})
	}
}

// TestManyTakers runs 16 takers, each with its own connections, making many small
// takes of one tag: none may fail (the MariaDB ticket server of the issue
// deadlocked at 16 clients) and no value may be given twice.
func TestManyTakers(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			u := e.url(t)
			setup := openStore(t, u, Options{})
			tag := newTag(t, setup, 0, 10)
			const takers, takes = 16, 60
			stores := make([]*Store, takers)
			for i := range stores {
				stores[i] = openStore(t, u, Options{})
			}
			var (
				mu     sync.Mutex
				blocks []segment.Block
				wg     sync.WaitGroup
			)
			start := make(chan struct{})
			for i, s := range stores {
				wg.Go(func() {
					<-start
					ctx := testCtx(t)
					var floor int64
					for j := range takes {
						b, err := s.Take(ctx, tag, int64(1+(i+j)%5), floor, 0)
						if err != nil {
							t.Errorf("taker %d, take %d: %v", i, j, err)
							return
						}
						if j%10 == 9 && b.Len() > 1 {
							// Hand back the tail now and then, so that claims race too.
							if err := s.Return(ctx, tag, segment.Block{First: b.Last, Last: b.Last}); err != nil {
								t.Errorf("taker %d: return: %v", i, err)
								return
							}
							b.Last--
						}
						floor = max(floor, b.Last)
						mu.Lock()
						blocks = append(blocks, b)
						mu.Unlock()
					}
				})
			}
			close(start)
			wg.Wait()
			if t.Failed() {
				return
			}
			total := noOverlap(t, blocks)
			got := findTag(t, setup, tag)
			if got.Max != total+got.Returned {
				t.Fatalf("Max %d; the blocks hold %d values and %d wait returned", got.Max, total, got.Returned)
			}
		})
	}
}

// TestTopOfRange: Max reaches 2^63-1 without max_id passing BIGINT, a tag can be
// created there, and a Leaf server's next UPDATE fails instead of wrapping.
func TestTopOfRange(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := openStore(t, e.url(t), Options{})
			tag := newTag(t, s, math.MaxInt64-3, 10)
			if id := maxID(t, s, tag); id != math.MaxInt64-2 {
				t.Fatalf("max_id %d", id)
			}
			if b, err := s.Take(ctx, tag, 3, 0, 0); err != nil || b.Last != math.MaxInt64 {
				t.Fatalf("Take of the last 3: %+v, %v", b, err)
			}
			if id, got := maxID(t, s, tag), findTag(t, s, tag); id != math.MaxInt64 || got.Max != math.MaxInt64 || got.Returned != 0 {
				t.Fatalf("max_id %d, listed %+v", id, got)
			}
			if _, err := s.Take(ctx, tag, 1, 0, 0); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Take past the top: %v", err)
			}
			if e.name != "SQLite" {
				// SQLite turns an overflowing integer sum into a REAL; Leaf does not
				// run on it.
				if b, err := leafTake(ctx, s, tag); err == nil {
					t.Fatalf("Leaf's UPDATE at the top succeeded: %+v", b)
				}
			}

			top := newTag(t, s, math.MaxInt64, 10)
			if got := findTag(t, s, top); got.Max != math.MaxInt64 {
				t.Fatalf("created at the top, listed %+v", got)
			}
			if _, err := s.Take(ctx, top, 1, 0, 0); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Take of a tag created at the top: %v", err)
			}
		})
	}
}

// TestReturnChecks: Return refuses values never handed out and a block returned
// twice, and Create of a tag deleted by hand forgets its returned blocks.
func TestReturnChecks(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := openStore(t, e.url(t), Options{})
			tag := newTag(t, s, 0, 10)
			if _, err := s.Take(ctx, tag, 100, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := s.Return(ctx, tag, segment.Block{First: 90, Last: 101}); err == nil || !strings.Contains(err.Error(), "never handed out") {
				t.Errorf("Return above Max: %v", err)
			}
			if err := s.Return(ctx, tag, segment.Block{First: 50, Last: 60}); err != nil {
				t.Fatal(err)
			}
			for _, b := range []segment.Block{{First: 50, Last: 60}, {First: 55, Last: 70}, {First: 40, Last: 50}, {First: 1, Last: 100}} {
				if err := s.Return(ctx, tag, b); err == nil || !strings.Contains(err.Error(), "overlaps") {
					t.Errorf("Return of %+v over 50..60: %v", b, err)
				}
			}
			exec(t, s, "DELETE FROM "+s.Table()+" WHERE biz_tag = ?", tag)
			if err := s.Create(ctx, segment.Tag{Name: tag, Step: 10}); err != nil {
				t.Fatal(err)
			}
			if got := findTag(t, s, tag); got.Returned != 0 || got.Max != 0 {
				t.Fatalf("recreated tag listed %+v; want nothing returned", got)
			}
			if b, err := s.Take(ctx, tag, 10, 0, 0); err != nil || b.Returned || b.First != 1 {
				t.Fatalf("Take of the recreated tag: %+v, %v", b, err)
			}
		})
	}
}

// TestUpdatedByDatabaseClock: Updated comes from update_time, which the database
// sets when a Take changes the row.
func TestUpdatedByDatabaseClock(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := openStore(t, e.url(t), Options{})
			tag := newTag(t, s, 0, 10)
			exec(t, s, "UPDATE "+s.Table()+" SET update_time = '2001-02-03 04:05:06' WHERE biz_tag = ?", tag)
			if got := findTag(t, s, tag).Updated; got.Year() != 2001 {
				t.Fatalf("Updated %v after setting 2001-02-03", got)
			}
			if _, err := s.Take(ctx, tag, 1, 0, 0); err != nil {
				t.Fatal(err)
			}
			got := findTag(t, s, tag).Updated
			if d := time.Since(got); d < -time.Minute || d > time.Minute {
				t.Fatalf("Updated %v after a Take, %v from this machine's clock", got, d)
			}
			if got.Location() != time.UTC {
				t.Errorf("Updated in %v; want UTC", got.Location())
			}
		})
	}
}

// TestNew covers a store on the caller's *sql.DB: the tables are made on first use
// and Close leaves the handle open.
func TestNew(t *testing.T) {
	ctx := testCtx(t)
	// The caller's own handle, by the driver's name, without Open's settings.
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "segments.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, bad := range []struct {
		db   *sql.DB
		d    Dialect
		opts Options
	}{
		{nil, SQLite, Options{}},
		{db, 0, Options{}},
		{db, SQLite, Options{Table: "x; DROP TABLE y"}},
		{db, SQLite, Options{Table: strings.Repeat("t", 55)}},
	} {
		if _, err := New(bad.db, bad.d, bad.opts); err == nil || !strings.HasPrefix(err.Error(), "segment/sqlstore: ") {
			t.Errorf("New(%v, %v, %+v): %v", bad.db != nil, bad.d, bad.opts, err)
		}
	}
	skip, err := New(db, SQLite, Options{Table: "absent", SkipCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skip.Tags(ctx); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("SkipCreate with no table: Tags: %v", err)
	}
	s, err := New(db, SQLite, Options{})
	if err != nil || s.Table() != DefaultTable || s.Dialect() != SQLite || s.DB() != db {
		t.Fatalf("New = %+v, %v", s, err)
	}
	if err := s.Create(ctx, segment.Tag{Name: "t", Step: 5}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Take(ctx, "t", 5, 0, 0); err != nil || b.First != 1 {
		t.Fatalf("Take = %+v, %v", b, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("Close closed the caller's *sql.DB: %v", err)
	}
}

func TestDialectString(t *testing.T) {
	for d, want := range map[Dialect]string{Postgres: "postgres", MySQL: "mysql", SQLite: "sqlite", 0: "Dialect(0)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q; want %q", int(d), got, want)
		}
	}
}

// BenchmarkTake measures one fresh Take of 1000 values: a transaction of five
// statements on PostgreSQL and MySQL, so about five round trips.
func BenchmarkTake(b *testing.B) {
	for _, e := range engines() {
		b.Run(e.name, func(b *testing.B) {
			s := openStore(b, e.url(b), Options{})
			tag := newTag(b, s, 0, 1000)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Take(ctx, tag, 1000, 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLeafAllocs: the tag table's rows as Leaf's /db page reads them: max_id as
// stored (the next value), update_time as Connector/J's Timestamp.toString.
func TestLeafAllocs(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := openStore(t, e.url(t), Options{})
			tag := newTag(t, s, 41, 10)
			exec(t, s, "UPDATE "+s.Table()+" SET update_time = '2001-02-03 04:05:06' WHERE biz_tag = ?", tag)
			rows, err := s.LeafAllocs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Tag == tag {
					// 03, or a day off in a far time zone (PostgreSQL's timestamptz).
					if r.MaxID != 42 || r.Step != 10 || !strings.HasPrefix(r.UpdateTime, "2001-02-0") || !strings.HasSuffix(r.UpdateTime, ".0") {
						t.Fatalf("%+v", r)
					}
					return
				}
			}
			t.Fatalf("tag %s not listed: %+v", tag, rows)
		})
	}
}
