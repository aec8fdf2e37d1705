package server

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// readRequest parses a request line of method and target as the server reads a
// request off a connection (http.ReadRequest), so that a test sees the Method,
// URL, RawPath and Host the handlers see; ok is false when net/http refuses it.
func readRequest(method, target string) (*http.Request, bool) {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: flurry.test\r\n\r\n")))
	return r, err == nil
}

// patternMux is a ServeMux with the patterns of s, each on a handler that does
// nothing.
func patternMux(s *Server) *http.ServeMux {
	mux := http.NewServeMux()
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, rt := range s.routeList() {
		mux.Handle(rt.pattern, nop)
	}
	return mux
}

// routed reports the pattern mux routes r to (empty for a redirect) and the
// namespace it gives; r is the mux's afterwards.
func routed(mux *http.ServeMux, r *http.Request) (pattern, name string) {
	mux.ServeHTTP(httptest.NewRecorder(), r)
	return r.Pattern, r.PathValue("namespace")
}

func TestHotNextAgreesWithMux(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	mux := patternMux(s)
	for _, tc := range []struct {
		method, target string
		hot            bool
	}{
		{"GET", "/v1/default/next", true},
		{"GET", "/v1/default/next?count=3", true},
		{"GET", "/v1/a.b-c_d/next", true},
		{"GET", "http://flurry.test/v1/default/next", true},
		{"HEAD", "/v1/default/next", false},
		{"POST", "/v1/default/next", false},
		{"get", "/v1/default/next", false},
		{"GET", "/v1/./next", false},
		{"GET", "/v1/../next", false},
		{"GET", "/v1//next", false},
		{"GET", "/v1/a//next", false},
		{"GET", "/v1/a%2Fb/next", false},
		{"GET", "/v1/%64efault/next", false},
		{"GET", "/v1/default/next/", false},
		{"GET", "/v1/default/nextx", false},
		{"GET", "/v1/next", false},
		{"GET", "/v2/default/next", false},
		{"GET", "/v1/a/b/next", false},
	} {
		r, ok := readRequest(tc.method, tc.target)
		if !ok {
			t.Fatalf("%s %s: not a request", tc.method, tc.target)
		}
		name, hot := hotTakes(r)
		if hot != tc.hot {
			t.Errorf("%s %s: hot route %v, want %v", tc.method, tc.target, hot, tc.hot)
		}
		if !hot {
			continue
		}
		if pattern, mname := routed(mux, r); pattern != nextPattern || mname != name {
			t.Errorf("%s %s: hot route serves namespace %q; the mux routes it to %q, namespace %q", tc.method, tc.target, name, pattern, mname)
		}
	}
}

// TestHotNextSafe: the hot route is used only when the mux routes every GET of
// /v1/{namespace}/next to the one-ID route; a pattern that wins over it for some
// namespace, host or method leaves every request to the mux.
func TestHotNextSafe(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, tc := range []struct {
		extra []string
		safe  bool
	}{
		{nil, true},
		{[]string{"/v1/id/nextId", "/v1/id/nextId/{$}", "/v1/id/nextSegmentId"}, true}, // tinyid under the prefix /v1
		{[]string{"POST /v1/id/next"}, true},
		{[]string{"/v1/{n}/next/{$}"}, true},
		{[]string{"/v1/id/next"}, false},
		{[]string{"GET /v1/id/next"}, false},
		{[]string{"GET /v1/{n}/next"}, false},
		{[]string{"GET  /v1/{n}/next"}, false},
		{[]string{"flurry.test/v1/{n}/next"}, false},
		{[]string{"HEAD flurry.test/v1/id/next", "/v1/id/next"}, false},
	} {
		routes := s.routeList()
		for _, p := range tc.extra {
			routes = append(routes, route{p, nop})
		}
		mux := http.NewServeMux()
		for _, rt := range routes {
			mux.Handle(rt.pattern, rt.h)
		}
		if got := hotNextSafe(mux, routes); got != tc.safe {
			t.Errorf("with %q: hotNextSafe %v, want %v", tc.extra, got, tc.safe)
		}
	}
}

// TestHotNextServes: the server answers the hot route and the mux's route alike
// (a namespace that needs unescaping goes through the mux).
func TestHotNextServes(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	if !hotNextSafe(patternMux(s), s.routeList()) {
		t.Fatal("the one-ID route goes through the mux on a server whose routes never compete with it")
	}
	for _, target := range []string{"/v1/default/next?format=text", "/v1/%64efault/next?format=text"} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 || len(rec.Body.String()) < 2 {
			t.Errorf("%s: %d %q", target, rec.Code, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/nope/next", nil))
	if rec.Code != 404 {
		t.Errorf("/v1/nope/next: %d %q", rec.Code, rec.Body.String())
	}
}

// FuzzNextPath: every request the hot route serves itself is a GET that the
// server's mux routes to the one-ID route with the same namespace; and a
// request that must issue nothing (HEAD, OPTIONS or TRACE anywhere, any method
// but GET on the one-ID route) issues nothing through the whole server.
// Requests are read from raw bytes as the server reads them.
func FuzzNextPath(f *testing.F) {
	s, _ := newServer(f, basicYAML, nil)
	mux := patternMux(s)
	for _, p := range []string{"/v1/default/next", "/v1/./next", "/v1/a%2Fb/next", "/v1/%2e%2e/next", "/v1/a;b/next", "/v1/\u00e9/next",
		"/v1/orders/next?count=3", "http://flurry.test/v1/default/next", "/v1/%64efault/next", "*"} {
		f.Add("GET", p)
		f.Add("HEAD", p)
	}
	f.Add("POST", "/v1/orders/next?count=2")
	f.Add("OPTIONS", "/api/segment/get/order-tag")
	f.Add("TRACE", "/api/snowflake/get/default/")
	f.Fuzz(func(t *testing.T, method, target string) {
		r, ok := readRequest(method, target)
		if !ok {
			return
		}
		name, hot := hotTakes(r)
		pattern, mname := routed(mux, r)
		if hot && (r.Method != http.MethodGet || pattern != nextPattern || mname != name) {
			t.Fatalf("%s %q: hot route serves namespace %q; the mux routes it to %q, namespace %q", method, target, name, pattern, mname)
		}
		switch {
		case r.Method == http.MethodHead, r.Method == http.MethodOptions, r.Method == http.MethodTrace:
		case r.Method != http.MethodGet && pattern == nextPattern:
		default:
			return // may issue: a GET, or a method Leaf's and tinyid's routes accept
		}
		issued, handed := issuedTotal(s)
		r, _ = readRequest(method, target)
		s.Handler().ServeHTTP(httptest.NewRecorder(), r)
		if i, h := issuedTotal(s); i != issued || h != handed {
			t.Fatalf("%s %q issued %d IDs (%d handed out of segment ranges)", method, target, i-issued, h-handed)
		}
	})
}
