package server

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/testenv"
	_ "modernc.org/sqlite"
)

// sqliteFile makes an SQLite file with stmts and returns its path.
func sqliteFile(t testing.TB, stmts ...string) (string, *sql.DB) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "compat.db")
	db, err := sql.Open("sqlite", p+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return p, db
}

// tinyTables is tinyid-server/db.sql's tables in SQLite's types.
var tinyTables = []string{
	`CREATE TABLE tiny_id_info (id INTEGER PRIMARY KEY, biz_type TEXT NOT NULL UNIQUE, begin_id INTEGER NOT NULL DEFAULT 0,
		max_id INTEGER NOT NULL DEFAULT 0, step INTEGER DEFAULT 0, delta INTEGER NOT NULL DEFAULT 1, remainder INTEGER NOT NULL DEFAULT 0,
		create_time TEXT NOT NULL DEFAULT '2010-01-01 00:00:00', update_time TEXT NOT NULL DEFAULT '2010-01-01 00:00:00', version INTEGER NOT NULL DEFAULT 0)`,
	`CREATE TABLE tiny_id_token (id INTEGER PRIMARY KEY, token TEXT NOT NULL DEFAULT '', biz_type TEXT NOT NULL DEFAULT '', remark TEXT NOT NULL DEFAULT '',
		create_time TEXT NOT NULL DEFAULT '2010-01-01 00:00:00', update_time TEXT NOT NULL DEFAULT '2010-01-01 00:00:00')`,
	`INSERT INTO tiny_id_token (token, biz_type) VALUES ('tok', 'pair')`,
	`INSERT INTO tiny_id_token (token, biz_type) VALUES ('tok', 'skew')`,
}

func tinyGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	code, _, body := get(t, base+path)
	return code, body
}

// TestTinyIDTwoDatabases: a biz type kept in two databases as tinyid's multi-DB
// setup has it (delta 2, remainders 0 and 1; SegmentId.init) is served with the
// stores listed in any order: every ID keeps its database's remainder, and the IDs
// of one server strictly increase. Rows whose deltas differ are refused with
// tinyid's code 6 (IdContronller, ErrorCode.SYS_ERR).
func TestTinyIDTwoDatabases(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	a, dba := sqliteFile(t, append(tinyTables,
		`INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('pair', 0, 0, 10, 2, 1)`,
		`INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('skew', 0, 0, 10, 2, 1)`)...)
	b, _ := sqliteFile(t, append(tinyTables,
		`INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('pair', 0, 0, 10, 2, 0)`,
		`INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('skew', 0, 0, 10, 3, 0)`)...)
	_, hs := newServer(t, fmt.Sprintf("tinyid:\n  stores: ['sqlite://%s?table=tiny_id_info', 'sqlite://%s?table=tiny_id_info']\n", a, b), nil)
	var last int64
	seen := map[int64]bool{}
	for i := 0; i < 30; i++ {
		code, body := tinyGet(t, hs.URL, "/tinyid/id/nextId?bizType=pair&token=tok&batchSize=7")
		var r struct {
			Data []int64
			Code int
		}
		if code != 200 || json.Unmarshal([]byte(body), &r) != nil || r.Code != 200 || len(r.Data) != 7 {
			t.Fatalf("%d %q", code, body)
		}
		for _, id := range r.Data {
			if id <= last || seen[id] {
				t.Fatalf("ID %d after %d", id, last)
			}
			last, seen[id] = id, true
		}
	}
	// Every odd ID came from database a (remainder 1): a's max_id covers them.
	var maxA int64
	if err := dba.QueryRow("SELECT max_id FROM tiny_id_info WHERE biz_type = 'pair'").Scan(&maxA); err != nil {
		t.Fatal(err)
	}
	for id := range seen {
		if id%2 == 1 && id > maxA {
			t.Fatalf("odd ID %d above database a's max_id %d", id, maxA)
		}
	}
	code, body := tinyGet(t, hs.URL, "/tinyid/id/nextId?bizType=skew&token=tok")
	if code != 200 || !strings.HasPrefix(body, `{"data":null,"code":6,"message":`) || strings.Contains(body, "sqlite") {
		t.Fatalf("skewed rows: %d %q", code, body)
	}
}

// TestLeafTagReload: with a leaf: section, a tag inserted into leaf_alloc is served
// after the next reload and a deleted one answers -2 again (SegmentIDGenImpl's
// updateCacheFromDb adds and removes tags every minute).
func TestLeafTagReload(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	p, db := sqliteFile(t, `CREATE TABLE leaf_alloc (biz_tag TEXT NOT NULL PRIMARY KEY, max_id INTEGER NOT NULL DEFAULT 1,
		step INTEGER NOT NULL, description TEXT DEFAULT NULL, update_time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('a', 1, 10)`)
	_, hs := newServer(t, "leaf:\n  segment:\n    stores: ['sqlite://"+p+"?table=leaf_alloc&schema=leaf']\n  reload: 50ms\n", nil)
	if code, body := tinyGet(t, hs.URL, "/api/segment/get/a"); code != 200 || body != "1" {
		t.Fatalf("a: %d %q", code, body)
	}
	if code, body := tinyGet(t, hs.URL, "/api/segment/get/b"); code != 500 || !strings.Contains(body, `"message":"Result{id=-2, status=EXCEPTION}"`) {
		t.Fatalf("b before: %d %q", code, body)
	}
	if _, err := db.Exec(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('b', 100, 10)`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { code, _ := tinyGet(t, hs.URL, "/api/segment/get/b"); return code == 200 })
	if _, err := db.Exec(`DELETE FROM leaf_alloc WHERE biz_tag = 'b'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { code, _ := tinyGet(t, hs.URL, "/api/segment/get/b"); return code == 500 })
	if code, body := tinyGet(t, hs.URL, "/api/segment/get/a"); code != 200 || body != "2" {
		t.Fatalf("a after: %d %q", code, body)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeafDecodeArith pins LeafMonitorController.decodeSnowflakeId's arithmetic.
func TestLeafDecodeArith(t *testing.T) {
	for _, tc := range []struct{ id, ms, worker, seq int64 }{
		{-1, 1288834974656, 1023, 4095},
		{5, 1288834974657, 0, 5},
		{1<<22 | 39<<12 | 3448, 1288834974658, 39, 3448},
		{-1 << 63, (-1<<63)>>22 + 1288834974657, 0, 0},
	} {
		ms, w, s := leafDecodeArith(tc.id)
		if ms != tc.ms || w != tc.worker || s != tc.seq {
			t.Errorf("%d: %d %d %d, want %d %d %d", tc.id, ms, w, s, tc.ms, tc.worker, tc.seq)
		}
	}
}

// FuzzTinyIDRoutes: any query gets tinyid's answer shapes (IdContronller): HTTP
// 200 with a Response body or plain text, or Spring's 400 for a batchSize that is
// no Integer; never a 500 or a body that names the database.
func FuzzTinyIDRoutes(f *testing.F) {
	testenv.NeedScheme(f, "sqlite")
	p, _ := sqliteFile(f, append(tinyTables, `INSERT INTO tiny_id_info (biz_type, max_id, step) VALUES ('pair', 0, 100)`)...)
	_, hs := newServer(f, "tinyid:\n  stores: ['sqlite://"+p+"?table=tiny_id_info']\n  batch_size_max: 50\n", nil)
	for _, s := range [][3]string{{"pair", "tok", "3"}, {"pair", "tok", ""}, {"pair", "x", "-1"}, {"", "", "abc"}, {"skew", "tok", "99999999999"}, {"pair", "tok", " 2"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, biz, token, batch string) {
		q := url.Values{"bizType": {biz}, "token": {token}, "batchSize": {batch}}.Encode()
		for _, route := range []string{"nextId", "nextIdSimple", "nextSegmentId", "nextSegmentIdSimple"} {
			code, body := tinyGet(t, hs.URL, "/tinyid/id/"+route+"?"+q)
			if strings.Contains(body, "sqlite") || strings.Contains(body, p) {
				t.Fatalf("%s: body names the database: %q", route, body)
			}
			switch {
			case code == 400 && strings.Contains(route, "nextId"):
				if _, err := strconv.ParseInt(strings.TrimSpace(batch), 10, 32); err == nil {
					t.Fatalf("%s: 400 for batchSize %q", route, batch)
				}
			case code != 200:
				t.Fatalf("%s?%s: %d %q", route, q, code, body)
			case strings.HasSuffix(route, "Simple"):
				for _, f := range strings.Split(body, ",") {
					if _, err := strconv.ParseInt(f, 10, 64); err != nil && body != "" {
						t.Fatalf("%s: %q", route, body)
					}
				}
			default:
				var r struct{ Code int }
				if json.Unmarshal([]byte(body), &r) != nil || (r.Code != 200 && r.Code != 5 && r.Code != 6) {
					t.Fatalf("%s: %q", route, body)
				}
			}
		}
	})
}

// TestLeafCode: Leaf's Result codes for generator errors (SegmentIDGenImpl: -3
// both buffers empty; SnowflakeIDGenImpl: -3 clock back past 5 ms, -1 otherwise).
func TestLeafCode(t *testing.T) {
	seg := &namespace{alloc: &segment.Allocator{}}
	sf := &namespace{}
	for _, tc := range []struct {
		ns   *namespace
		err  error
		want int64
	}{
		{seg, segment.ErrUnavailable, -3},
		{seg, segment.ErrExhausted, -3},
		{sf, fmt.Errorf("x: %w", snowflake.ErrClockBehind), -3},
		{sf, lease.ErrLost, -1},
	} {
		if got := leafCode(tc.ns, tc.err); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
}
