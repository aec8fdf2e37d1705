package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/compattest"
	"github.com/flurryid/flurry/verify/testenv"
)

// tinyScratch makes tinyid's tables (db.sql) in a scratch database of engine e,
// plus the rows given, and returns a store URL on them and the database.
func tinyScratch(t *testing.T, e compattest.Engine, rows ...string) (string, *sql.DB) {
	t.Helper()
	svc := testenv.MySQL
	if e == "postgres" {
		svc = testenv.Postgres
	}
	u, db := testenv.ScratchDB(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := compattest.Exec(ctx, db, append(compattest.TinyIDDDL(e), rows...)); err != nil {
		t.Fatal(err)
	}
	return withKey(u, "table=tiny_id_info"), db
}

func withKey(u, kv string) string {
	if strings.Contains(u, "?") {
		return u + "&" + kv
	}
	return u + "?" + kv
}

type tinyAnswer struct {
	Data    []int64 `json:"data"`
	Code    int     `json:"code"`
	Message string  `json:"message"`
}

func tinyNext(t *testing.T, base, biz, token string) (tinyAnswer, string) {
	t.Helper()
	q := url.Values{"bizType": {biz}, "token": {token}, "batchSize": {"3"}}.Encode()
	code, body := tinyGet(t, base, "/tinyid/id/nextId?"+q)
	var a tinyAnswer
	if code != 200 || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("nextId %s: %d %q", biz, code, body)
	}
	return a, body
}

// TestTinyIDBizTypeCollation: tinyid finds a biz type with WHERE biz_type = ?,
// which MySQL's utf8_general_ci compares without case, so "CX_A" is the row
// "cx_a" on every engine; its token check is Java's exact comparison against
// tiny_id_token's values, which TinyIdToken trims.
func TestTinyIDBizTypeCollation(t *testing.T) {
	testenv.NeedScheme(t, "mysql")
	for _, e := range []compattest.Engine{"mysql", "postgres"} {
		t.Run(string(e), func(t *testing.T) {
			u, _ := tinyScratch(t, e,
				"INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('cx_a', 0, 0, 100, 1, 0)",
				"INSERT INTO tiny_id_token (token, biz_type, remark) VALUES ('tok2', '  CX_A\t', 'x')",
				"INSERT INTO tiny_id_token (token, biz_type, remark) VALUES (' tok3 ', 'cx_a', 'x')")
			_, hs := newServer(t, "tinyid:\n  stores: ['"+u+"']\n", nil)
			var ids []int64
			for i := 0; i < 4; i++ {
				for _, c := range [][2]string{{"CX_A", "tok2"}, {"cx_a", "tok3"}} {
					a, body := tinyNext(t, hs.URL, c[0], c[1])
					if a.Code != 200 || len(a.Data) != 3 {
						t.Fatalf("%s with %s: %q", c[0], c[1], body)
					}
					ids = append(ids, a.Data...)
				}
			}
			for i := 1; i < len(ids); i++ {
				if ids[i] <= ids[i-1] {
					t.Fatalf("IDs of CX_A and cx_a do not strictly increase (two allocators on one row?): %v", ids)
				}
			}
			// The token check is Java's: exact, against trimmed values.
			for _, c := range [][2]string{{"CX_A", "tok3"}, {"cx_a", "tok2"}, {"cx_a", " tok3 "}, {"CX_A ", "tok2"}} {
				if a, body := tinyNext(t, hs.URL, c[0], c[1]); a.Code != 5 {
					t.Fatalf("%q with token %q: %q, want tinyid's token error", c[0], c[1], body)
				}
			}
		})
	}
}

// TestTinyIDFailureClasses: tinyid's code 6 says whether the database denied
// access, lacks the table or did not answer, and never names the database's
// host, user or database.
func TestTinyIDFailureClasses(t *testing.T) {
	testenv.NeedScheme(t, "mysql")
	for _, e := range []compattest.Engine{"mysql", "postgres"} {
		t.Run(string(e), func(t *testing.T) {
			u, db := tinyScratch(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			secretish := func(body string) {
				t.Helper()
				pu, _ := url.Parse(u)
				for _, s := range []string{pu.Hostname(), pu.Port(), "root", "postgres", "flurry_compat_", "ro_", "127.0.0.1"} {
					if s != "" && strings.Contains(body, s) {
						t.Fatalf("the answer names %q: %q", s, body)
					}
				}
			}
			const tok = "0f673adf80504e2eaa552f5d791b644c" // db.sql's token for test and test_odd

			// Denied: an account that may read but not update tiny_id_info.
			ro := readOnlyUser(ctx, t, db, e, u)
			_, hs := newServer(t, "tinyid:\n  stores: ['"+ro+"']\n", nil)
			a, body := tinyNext(t, hs.URL, "test", tok)
			if a.Code != 6 || !strings.Contains(a.Message, "denied access") {
				t.Fatalf("read-only account: %q, want code 6 saying access was denied", body)
			}
			secretish(body)

			// Unreachable: the database behind a proxy that refuses connections.
			p, pu := testenv.ProxyURL(t, u)
			_, hs = newServer(t, "tinyid:\n  stores: ['"+pu+"']\n", nil)
			p.Refuse()
			a, body = tinyNext(t, hs.URL, "test", tok)
			if a.Code != 6 || !strings.Contains(a.Message, "did not answer") {
				t.Fatalf("refused connections: %q, want code 6 saying the database did not answer", body)
			}
			secretish(body)
			p.Restore()

			// Missing table: tiny_id_info renamed while flurry runs.
			_, hs = newServer(t, "tinyid:\n  stores: ['"+u+"']\n", nil)
			rename := "RENAME TABLE tiny_id_info TO tiny_id_info_away"
			if e == "postgres" {
				rename = "ALTER TABLE tiny_id_info RENAME TO tiny_id_info_away"
			}
			if _, err := db.ExecContext(ctx, rename); err != nil {
				t.Fatal(err)
			}
			a, body = tinyNext(t, hs.URL, "test_odd", tok)
			if a.Code != 6 || !strings.Contains(a.Message, "table does not exist") {
				t.Fatalf("missing table: %q, want code 6 saying the table does not exist", body)
			}
			secretish(body)
			code, seg := tinyGet(t, hs.URL, "/tinyid/id/nextSegmentId?bizType=test&token="+tok)
			if code != 200 || !strings.Contains(seg, `"code":6,"message":"get next segmentId failed: the table does not exist`) {
				t.Fatalf("missing table, nextSegmentId: %d %q", code, seg)
			}
			secretish(seg)
		})
	}
}

// readOnlyUser makes a database account that may SELECT tinyid's tables but not
// change them, and returns u with it.
func readOnlyUser(ctx context.Context, t *testing.T, db *sql.DB, e compattest.Engine, u string) string {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	name := "ro_" + hex.EncodeToString(b[:])
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	var stmts, drop []string
	if e == "postgres" {
		schema := pu.Query().Get("search_path")
		stmts = []string{"CREATE ROLE " + name + " LOGIN", "GRANT USAGE ON SCHEMA " + schema + " TO " + name,
			"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + name}
		drop = []string{"REVOKE ALL ON ALL TABLES IN SCHEMA " + schema + " FROM " + name, "REVOKE ALL ON SCHEMA " + schema + " FROM " + name, "DROP ROLE " + name}
	} else {
		dbName := strings.TrimPrefix(pu.Path, "/")
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			stmts = append(stmts, fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY 'pw'", name, host),
				fmt.Sprintf("GRANT SELECT ON %s.* TO '%s'@'%s'", dbName, name, host))
			drop = append(drop, fmt.Sprintf("DROP USER '%s'@'%s'", name, host))
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range drop {
			db.ExecContext(ctx, s)
		}
	})
	pu.User = url.UserPassword(name, "pw")
	if e == "postgres" {
		pu.User = url.User(name)
	}
	return pu.String()
}

// TestGeneralCI compares generalCI with MariaDB's own utf8_general_ci on Latin-1's
// letters against every ASCII letter, case and trailing spaces.
func TestGeneralCI(t *testing.T) {
	testenv.NeedScheme(t, "mysql")
	_, db := testenv.ScratchDB(t, testenv.MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var others []string
	for c := 'A'; c <= 'Z'; c++ {
		others = append(others, string(c), string(c+32))
	}
	for r := rune(0xC0); r <= 0xFF; r++ {
		for _, o := range append(others, string(r)+"  ") {
			var eq bool
			q := "SELECT CONVERT(? USING utf8) COLLATE utf8_general_ci = CONVERT(? USING utf8) COLLATE utf8_general_ci"
			if err := db.QueryRowContext(ctx, q, string(r), o).Scan(&eq); err != nil {
				t.Fatal(err)
			}
			if got := generalCI(string(r)) == generalCI(o); got != eq {
				t.Errorf("%q = %q: MariaDB says %v, generalCI %v", string(r), o, eq, got)
			}
		}
	}
}
