package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/flurryid/flurry/server/dashboard"
)

func get(t *testing.T, h http.Handler, method, target string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerRoutes(t *testing.T) {
	h := dashboard.Handler()

	res := get(t, h, "GET", "/")
	page := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("GET /: %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("GET / Content-Type %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("GET / Cache-Control %q, want no-cache", cc)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != dashboard.CSP || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("GET / CSP %q", csp)
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no X-Content-Type-Options: nosniff")
	}
	// Buttons say what they act on: "Forget" alone did not say what was forgotten,
	// nor "Decode first" that it decodes the first of the IDs shown.
	for _, want := range []string{`<html lang="en">`, `id="decode-form"`, `id="next-btn"`, `id="token"`, `>Forget token</button>`, `>Decode the first ID</button>`, `placeholder="a decimal ID, e.g. one from Next IDs"`, `class="chart"`, `class="plot rate-plot"`, `class="plot runway-plot"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Nothing from another origin: the machine may have no internet, and the CSP
	// would block it anyway.
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("page refers to another origin")
	}

	// Every asset the page refers to is served with its hash, a content type and a
	// cache lifetime of a year.
	refs := regexp.MustCompile(`"(/assets/[^"?]+)\?v=([0-9a-f]{12})"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("page refers to %d versioned assets, want css, js and icon: %q", len(refs), refs)
	}
	types := map[string]string{
		".css": "text/css; charset=utf-8",
		".js":  "text/javascript; charset=utf-8",
		".svg": "image/svg+xml",
	}
	for _, m := range refs {
		url := m[1] + "?v=" + m[2]
		res := get(t, h, "GET", url)
		b := body(t, res)
		if res.StatusCode != 200 || len(b) == 0 {
			t.Errorf("GET %s: %d, %d bytes", url, res.StatusCode, len(b))
			continue
		}
		ext := m[1][strings.LastIndex(m[1], "."):]
		if ct := res.Header.Get("Content-Type"); ct != types[ext] {
			t.Errorf("GET %s Content-Type %q, want %q", url, ct, types[ext])
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s Cache-Control %q, want immutable", url, cc)
		}
		if res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no CSP", url)
		}
		// Without (or with a stale) hash: served, but revalidated.
		res = get(t, h, "GET", m[1]+"?v=000000000000")
		if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s with a stale hash: %d, Cache-Control %q", m[1], res.StatusCode, res.Header.Get("Cache-Control"))
		}
		// Revalidation by ETag.
		etag := res.Header.Get("ETag")
		res = get(t, h, "GET", m[1], "If-None-Match", etag)
		if etag == "" || res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match %s: %d, want 304", m[1], etag, res.StatusCode)
		}
	}

	res = get(t, h, "HEAD", "/")
	if res.StatusCode != 200 || body(t, res) != "" {
		t.Errorf("HEAD /: %d", res.StatusCode)
	}
}

func TestHandlerNotFound(t *testing.T) {
	h := dashboard.Handler()
	for _, p := range []string{
		"/assets/",          // no directory listing
		"/assets",           // nor a redirect to one
		"/assets/nope.js",   // unknown asset
		"/assets/../go.mod", // no escape
		"/assets/static/index.html",
		"/static/dashboard.js", // the embed directory is not a URL
		"/favicon.ico",
		"/v1/default/next", // the server's routes are not the dashboard's
		"/index.htm",
		"/dashboard.go",
	} {
		res := get(t, h, "GET", p)
		b := body(t, res)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
		if strings.Contains(b, "<a href") || strings.Contains(b, "<pre>") {
			t.Errorf("GET %s looks like a directory listing: %q", p, b)
		}
	}
}

func TestHandlerMethods(t *testing.T) {
	h := dashboard.Handler()
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		res := get(t, h, m, "/")
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /: %d, Allow %q", m, res.StatusCode, res.Header.Get("Allow"))
		}
	}
}
