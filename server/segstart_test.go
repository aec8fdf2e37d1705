package server

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestSegmentStartsWithAStoreDown: a segment namespace with two stores starts while
// the first (PostgreSQL, residue class 0) refuses, serves from the second (MariaDB,
// class 1), creates its tag in PostgreSQL once it is back, and serves from it when
// MariaDB goes away. Before segment.OpenStores the server did not start.
func TestSegmentStartsWithAStoreDown(t *testing.T) {
	testenv.NeedScheme(t, "postgres")
	proxied := func(raw string) (string, *testenv.Proxy) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := testenv.StartProxy(t, u.Host)
		u.Host = p.Addr()
		return u.String(), p
	}
	pgURL, pg := proxied(testenv.Postgres.URL(t))
	myURL, my := proxied(testenv.MySQL.URL(t))
	pg.Cut()
	tag := segmenttest.TagName(t)
	yaml := "namespaces:\n  ids:\n    strategy: segment\n    segment:\n      tag: " + tag +
		"\n      create: {step: 50}\n      max_step: 100\n      fetch_timeout: 2s\n      stores: ['" + pgURL + "', '" + myURL + "']\n"
	_, hs := newServer(t, yaml, nil)

	var last int64
	// next asks for 20 IDs and returns how many were even (PostgreSQL's), or -1 for
	// a 503 (no store answered yet).
	next := func() int {
		t.Helper()
		code, _, body := get(t, hs.URL+"/v1/ids/next?count=20&format=number")
		if code == 503 {
			return -1
		}
		var res struct{ IDs []int64 }
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil || len(res.IDs) != 20 {
			t.Fatalf("next: %d %q", code, body)
		}
		even := 0
		for _, id := range res.IDs {
			if id <= last {
				t.Fatalf("ID %d after %d", id, last)
			}
			last = id
			even += 1 - int(id%2)
		}
		return even
	}
	for i := 0; i < 50; i++ {
		if even := next(); even != 0 {
			t.Fatalf("request %d: %d IDs from PostgreSQL while it refused (or 503)", i, even)
		}
	}
	pg.Restore()
	// PostgreSQL joins in the background; once MariaDB goes away the namespace
	// serves what it buffered, then PostgreSQL's IDs (a 503 only if PostgreSQL has
	// not joined yet).
	my.Cut()
	for deadline := time.Now().Add(time.Minute); ; {
		even := next()
		if even > 0 {
			break
		}
		if even < 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatal("no ID from PostgreSQL within a minute of its return")
		}
	}
	for i := 0; i < 20; i++ {
		if even := next(); even != 20 {
			t.Fatalf("after the move to PostgreSQL: %d of 20 IDs even", even)
		}
	}
	my.Restore() // so that Close can hand MariaDB's ranges back
}
