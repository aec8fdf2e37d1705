package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flurryid/flurry/verify/testenv"
)

// issuedTotal is how many IDs the namespaces of s have issued, and how many the
// segment namespaces' allocators have handed out of their ranges.
func issuedTotal(s *Server) (issued, handed int64) {
	for _, ns := range s.namespaces {
		issued += ns.issued.Load()
		if ns.alloc != nil {
			handed += ns.alloc.Stats().Issued
		}
	}
	return issued, handed
}

// sendMethods sends each of methods to each of targets, over the wire to hs (so
// net/http's own HEAD handling is in the loop) and through s.Handler() directly,
// and checks the answer: 405 with allow, nothing issued.
func sendMethods(t *testing.T, s *Server, hs *httptest.Server, methods, targets []string, allow string) {
	t.Helper()
	for _, target := range targets {
		for _, m := range methods {
			req, err := http.NewRequest(m, hs.URL+target, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 405 || res.Header.Get("Allow") != allow {
				t.Errorf("%s %s over HTTP: %d, Allow %q; want 405, Allow %q", m, target, res.StatusCode, res.Header.Get("Allow"), allow)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(m, target, nil))
			if rec.Code != 405 || rec.Header().Get("Allow") != allow {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", m, target, rec.Code, rec.Header().Get("Allow"), allow)
			}
			if m != http.MethodHead && strings.Count(rec.Body.String(), "\n") != 1 {
				t.Errorf("%s %s: error body not one line: %q", m, target, rec.Body.String())
			}
		}
	}
	if issued, handed := issuedTotal(s); issued != 0 || handed != 0 {
		t.Errorf("%v to %v issued %d IDs (%d handed out of segment ranges); want none", methods, targets, issued, handed)
	}
}

// TestNextHeadIssuesNothing: GET /v1/{namespace}/next issues IDs, so HEAD, which
// a client, proxy or crawler sends believing it safe, must not. It answers 405
// with Allow: GET, as every method but GET does, whether the hot route sees the
// request (a clean path) or the mux does (a path that needs unescaping).
func TestNextHeadIssuesNothing(t *testing.T) {
	s, hs := newServer(t, basicYAML, nil)
	hot := []string{"/v1/default/next", "/v1/orders/next?count=3", "/v1/secret/next"}
	mux := []string{"/v1/%64efault/next", "/v1/%6frders/next?count=3&format=text"}
	for _, target := range hot {
		if _, ok := nextPath(strings.Split(target, "?")[0]); !ok {
			t.Fatalf("%s: not a hot-route path", target)
		}
	}
	sendMethods(t, s, hs, []string{http.MethodHead}, append(hot, mux...), "GET")
	sendMethods(t, s, hs, []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"}, append(hot, mux...), "GET")

	// GET still issues, on both routes.
	for _, target := range []string{"/v1/orders/next", "/v1/%6frders/next"} {
		if code, _, body := get(t, hs.URL+target); code != 200 {
			t.Fatalf("GET %s: %d %q", target, code, body)
		}
	}
	if issued, handed := issuedTotal(s); issued != 2 || handed != 2 {
		t.Errorf("two GETs: issued %d, handed out %d; want 2 and 2", issued, handed)
	}
}

// TestLeafHeadIssuesNothing: Leaf's ID routes accept any method (Leaf's clients
// GET; Spring maps the routes without a method), with or without the trailing
// slash, except the safe ones other than GET: HEAD, OPTIONS (a browser's CORS
// preflight) and TRACE answer 405 and issue nothing.
func TestLeafHeadIssuesNothing(t *testing.T) {
	s, hs := newServer(t, basicYAML, nil)
	targets := []string{"/api/segment/get/order-tag", "/api/segment/get/order-tag/", "/api/segment/get/orders",
		"/api/snowflake/get/default", "/api/snowflake/get/x/"}
	sendMethods(t, s, hs, []string{"HEAD", "OPTIONS", "TRACE"}, targets, "GET, POST")
	for _, target := range targets {
		req, _ := http.NewRequest("POST", hs.URL+target, nil)
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("POST %s: %d", target, res.StatusCode)
		}
	}
	if issued, _ := issuedTotal(s); issued != int64(len(targets)) {
		t.Errorf("%d POSTs issued %d IDs", len(targets), issued)
	}
}

// TestRPCHeadIssuesNothing: the IDService's procedures are POST (connect), and a
// HEAD of one issues nothing.
func TestRPCHeadIssuesNothing(t *testing.T) {
	s, hs := newServer(t, basicYAML, nil)
	for _, target := range []string{"/flurry.v1.IDService/Next", "/flurry.v1.IDService/Next?encoding=json&message=%7B%22namespace%22%3A%22default%22%7D"} {
		req, _ := http.NewRequest("HEAD", hs.URL+target, nil)
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Errorf("HEAD %s: 200", target)
		}
	}
	if issued, handed := issuedTotal(s); issued != 0 || handed != 0 {
		t.Errorf("HEAD of the RPC issued %d IDs (%d handed out)", issued, handed)
	}
}

// TestTinyIDHeadIssuesNothing: tinyid's routes accept any method (its Java
// client POSTs) except the safe ones other than GET: a HEAD, OPTIONS or TRACE of
// nextId takes no ID, and one of nextSegmentId takes no range from the table.
func TestTinyIDHeadIssuesNothing(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	p, db := sqliteFile(t, append(tinyTables,
		`INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder) VALUES ('pair', 0, 0, 10, 1, 0)`)...)
	s, hs := newServer(t, fmt.Sprintf("tinyid:\n  stores: ['sqlite://%s?table=tiny_id_info']\n", p), nil)
	var targets []string
	for _, r := range []string{"nextId", "nextIdSimple", "nextSegmentId", "nextSegmentIdSimple"} {
		targets = append(targets, "/tinyid/id/"+r+"?bizType=pair&token=tok", "/tinyid/id/"+r+"/?bizType=pair&token=tok&batchSize=3")
	}
	maxID := func() int64 {
		t.Helper()
		var n int64
		if err := db.QueryRow(`SELECT max_id FROM tiny_id_info WHERE biz_type = 'pair'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := maxID()
	sendMethods(t, s, hs, []string{"HEAD", "OPTIONS", "TRACE"}, targets, "GET, POST")
	if after := maxID(); after != before {
		t.Errorf("HEAD, OPTIONS and TRACE moved tiny_id_info's max_id from %d to %d", before, after)
	}
	// The first ID after them is the table's first: none were taken.
	if code, body := tinyGet(t, hs.URL, "/tinyid/id/nextIdSimple?bizType=pair&token=tok"); code != 200 || body != "1" {
		t.Errorf("first nextIdSimple after HEAD, OPTIONS and TRACE: %d %q, want 200 \"1\"", code, body)
	}
	req, _ := http.NewRequest("POST", hs.URL+"/tinyid/id/nextIdSimple?bizType=pair&token=tok", nil)
	res, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("POST nextIdSimple: %d", res.StatusCode)
	}
}
