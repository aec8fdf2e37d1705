package server

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestSpringMatch: Spring MVC 4.3's defaults (suffix pattern matching, trailing
// slash matching) on Leaf's and tinyid's route shapes.
func TestSpringMatch(t *testing.T) {
	seg := []string{"api", "segment", "get", "{key}"}
	cache := []string{"cache"}
	for _, tc := range []struct {
		segs []string
		path string
		key  string
		ok   bool
	}{
		{seg, "/api/segment/get/cx", "cx", true},
		{seg, "/api/segment/get/cx.dot", "cx", true},
		{seg, "/api/segment/get/cx.json", "cx", true},
		{seg, "/api/segment/get/a.b.c", "a.b", true}, // greedy: the key ends at the last dot
		{seg, "/api/segment/get/cx.", "cx", true},
		{seg, "/api/segment/get/.json", "", true}, // Leaf then refuses the empty key
		{seg, "/api/segment/get/cx/", "cx", true},
		{seg, "/api/segment/get/cx.json/", "cx.json", true}, // no suffix rule with a trailing slash
		{seg, "/api/segment/get/", "", false},
		{seg, "/api/segment/get", "", false},
		{seg, "/api/segment/get/a/b", "", false},
		{seg, "/api/segment/got/a", "", false},
		{cache, "/cache", "", true},
		{cache, "/cache/", "", true},
		{cache, "/cache.json", "", true},
		{cache, "/cache.json/", "", false},
		{cache, "/cachex", "", false},
		{cache, "/cache/x", "", false},
	} {
		key, ok := springMatch(tc.segs, springLookupPath(tc.path))
		if key != tc.key || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.path, key, ok, tc.key, tc.ok)
		}
	}
	if got := springLookupPath("/api/segment/get/cx;jsessionid=1;v=2/x;y"); got != "/api/segment/get/cx/x" {
		t.Errorf("path parameters: %q", got)
	}
}

// TestWantsHTML: which Accept headers get Spring Boot's Whitelabel page rather
// than its JSON (BasicErrorController's errorHtml produces text/html).
func TestWantsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                            false,
		"*/*":                         false,
		"application/json":            false,
		"text/html":                   true,
		"application/json, text/html": true, // application/json matches neither method
		"text/*;q=0.5":                true,
		"TEXT/HTML":                   true,
		"text/html;q=0":               false,
		"text/plain":                  false,
		"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8": true, // a browser
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsHTML(r); got != want {
			t.Errorf("Accept %q: %v, want %v", accept, got, want)
		}
	}
}

var (
	springJSON404 = regexp.MustCompile(`^\{"timestamp":\d{13},"status":404,"error":"Not Found","message":"No message available","path":"([^"]*)"\}\n$`)
	whitelabel    = regexp.MustCompile(`^<html><body><h1>Whitelabel Error Page</h1><p>This application has no explicit mapping for /error, so you are seeing this as a fallback\.</p><div id='created'>[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}</div><div>There was an unexpected error \(type=([^,]*), status=(\d+)\)\.</div><div>(.*)</div></body></html>\n$`)
)

func springGet(t *testing.T, url, accept string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// TestSpringRoutes: Leaf's and tinyid's routes as Spring Boot 1.5 serves them:
// suffix forms, path parameters, Spring's 404 in JSON and HTML on their paths,
// flurry's own 404 elsewhere.
func TestSpringRoutes(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	leaf, _ := sqliteFile(t, `CREATE TABLE leaf_alloc (biz_tag TEXT NOT NULL PRIMARY KEY, max_id INTEGER NOT NULL DEFAULT 1,
		step INTEGER NOT NULL, description TEXT DEFAULT NULL, update_time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('cx', 1, 1000)`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('a.b', 500, 1000)`)
	tiny, _ := sqliteFile(t, append(tinyTables, `INSERT INTO tiny_id_info (biz_type, max_id, step) VALUES ('pair', 0, 100)`)...)
	_, hs := newServer(t, "leaf:\n  segment:\n    stores: ['sqlite://"+leaf+"?table=leaf_alloc&schema=leaf']\n"+
		"tinyid:\n  stores: ['sqlite://"+tiny+"?table=tiny_id_info']\n", nil)

	next := int64(1)
	for _, p := range []string{"/api/segment/get/cx", "/api/segment/get/cx.dot", "/api/segment/get/cx.json", "/api/segment/get/cx;jsessionid=AB12", "/api/segment/get/cx/"} {
		code, ct, body := springGet(t, hs.URL+p, "")
		if code != 200 || ct != "text/plain;charset=UTF-8" || body != strconv.FormatInt(next, 10) {
			t.Fatalf("%s: %d %q %q, want ID %d of tag cx", p, code, ct, body, next)
		}
		next++
	}
	// a.b.c is key a.b, a tag of the table; a.b itself is key a, which is not.
	if code, _, body := springGet(t, hs.URL+"/api/segment/get/a.b.c", ""); code != 200 || body != "500" {
		t.Fatalf("a.b.c: %d %q", code, body)
	}
	if code, _, body := springGet(t, hs.URL+"/api/segment/get/a.b", ""); code != 500 || !strings.Contains(body, `"message":"Result{id=-2, status=EXCEPTION}"`) {
		t.Fatalf("a.b: %d %q", code, body)
	}
	if code, _, body := springGet(t, hs.URL+"/api/segment/get/.json", ""); code != 500 ||
		!strings.Contains(body, `"exception":"com.sankuai.inf.leaf.server.exception.NoKeyException","message":"Key is none"`) {
		t.Fatalf(".json: %d %q", code, body)
	}
	for _, p := range []string{"/cache.json", "/db.html", "/cache/"} {
		if code, ct, body := springGet(t, hs.URL+p, ""); code != 200 || ct != "text/html;charset=UTF-8" || !strings.Contains(body, "<td>cx</td>") {
			t.Fatalf("%s: %d %q %q", p, code, ct, body)
		}
	}
	if code, _, body := springGet(t, hs.URL+"/decodeSnowflakeId.json?snowflakeId=5", ""); code != 200 || !strings.HasPrefix(body, `{"workerId":"0","sequenceId":"5"`) {
		t.Fatalf("decodeSnowflakeId.json: %d %q", code, body)
	}
	for _, p := range []string{"/tinyid/id/nextIdSimple.json", "/tinyid/id/nextIdSimple;x=1", "/tinyid/id/nextIdSimple/"} {
		if code, _, body := springGet(t, hs.URL+p+"?bizType=pair&token=tok", ""); code != 200 || body == "" || strings.Contains(body, ",") {
			t.Fatalf("%s: %d %q", p, code, body)
		}
	}

	// Spring Boot's 404 on Leaf's and tinyid's paths, JSON or the Whitelabel page.
	for _, p := range []string{"/api/segment/get/", "/api/segment/get/a/b", "/api/nope", "/api/snowflake/get/", "/cache/x", "/db/x/y",
		"/decodeSnowflakeId/x", "/css/nope.css", "/tinyid/id/nope", "/tinyid/id/nextId/x", "/tinyid/", "/api/segment/get/%C3%A9/x"} {
		code, ct, body := springGet(t, hs.URL+p, "")
		m := springJSON404.FindStringSubmatch(body)
		if code != 404 || ct != "application/json;charset=UTF-8" || m == nil || m[1] != p {
			t.Errorf("%s: %d %q %q, want Spring Boot's 404", p, code, ct, body)
		}
		code, ct, body = springGet(t, hs.URL+p, "text/html,application/xhtml+xml,*/*;q=0.8")
		m = whitelabel.FindStringSubmatch(body)
		if code != 404 || ct != "text/html;charset=UTF-8" || m == nil || m[1] != "Not Found" || m[2] != "404" || m[3] != "No message available" {
			t.Errorf("%s as HTML: %d %q %q, want the Whitelabel Error Page", p, code, ct, body)
		}
	}
	// A Leaf error as a browser sees it.
	code, _, body := springGet(t, hs.URL+"/api/segment/get/nope", "text/html")
	if m := whitelabel.FindStringSubmatch(body); code != 500 || m == nil || m[1] != "Internal Server Error" || m[3] != "Result{id=-2, status=EXCEPTION}" {
		t.Fatalf("-2 as HTML: %d %q", code, body)
	}
	// Elsewhere, flurry's own 404.
	if code, _, body := springGet(t, hs.URL+"/nope", ""); code != 404 || strings.Contains(body, "timestamp") {
		t.Fatalf("/nope: %d %q", code, body)
	}
}

// TestCompatMetrics: the tags of Leaf's table and tinyid's biz types are counted
// in the native routes' families as namespaces leaf:TAG and tinyid:BIZ, failures
// with the status flurry's own routes would give, and names that no row has make
// no series.
func TestCompatMetrics(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	leaf, _ := sqliteFile(t, `CREATE TABLE leaf_alloc (biz_tag TEXT NOT NULL PRIMARY KEY, max_id INTEGER NOT NULL DEFAULT 1,
		step INTEGER NOT NULL, description TEXT DEFAULT NULL, update_time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('cx', 1, 1000)`)
	tiny, _ := sqliteFile(t, append(tinyTables, `INSERT INTO tiny_id_info (biz_type, max_id, step) VALUES ('pair', 0, 100)`)...)
	_, hs := newServer(t, "leaf:\n  segment:\n    stores: ['sqlite://"+leaf+"?table=leaf_alloc&schema=leaf']\n"+
		"tinyid:\n  stores: ['sqlite://"+tiny+"?table=tiny_id_info']\n", nil)
	for _, p := range []string{"/api/segment/get/cx", "/api/segment/get/cx.json", "/api/segment/get/made-up-1", "/api/segment/get/made-up-2",
		"/tinyid/id/nextId?bizType=pair&token=tok&batchSize=3", "/tinyid/id/nextIdSimple?bizType=pair&token=tok",
		"/tinyid/id/nextId?bizType=pair&token=wrong", "/tinyid/id/nextSegmentId?bizType=pair&token=tok",
		"/tinyid/id/nextId?bizType=made-up-3&token=tok", "/tinyid/id/nextId?bizType=skew&token=tok"} {
		springGet(t, hs.URL+p, "")
	}
	_, _, body := springGet(t, hs.URL+"/metrics", "")
	for _, want := range []string{
		`flurry_request_duration_seconds_count{namespace="leaf:cx",route="leaf"} 2`,
		`flurry_ids_issued_total{namespace="leaf:cx"} 2`,
		`flurry_segment_fetches_total{namespace="leaf:cx"} 1`,
		`flurry_request_errors_total{namespace="leaf:",status="404"} 2`,
		`flurry_request_duration_seconds_count{namespace="tinyid:pair",route="tinyid"} 3`,
		`flurry_ids_issued_total{namespace="tinyid:pair"} 4`,
		`flurry_segment_buffered_ids{namespace="tinyid:pair"}`,
		`flurry_request_errors_total{namespace="tinyid:",status="401"} 2`, // made-up-3: tok may not ask for it
		`flurry_request_errors_total{namespace="tinyid:",status="404"} 1`, // skew: tok may, no row has it
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want+" ") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "made-up") {
		t.Errorf("a name no row has made a series:\n%s", body)
	}
	if t.Failed() {
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, "leaf:") || strings.Contains(l, "tinyid:") {
				t.Log(l)
			}
		}
	}
}
