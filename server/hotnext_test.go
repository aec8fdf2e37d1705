package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// muxNext reports what ServeMux, with the server's one-ID pattern and a catch-all,
// does with a GET of target: whether it routes it to the one-ID handler and with
// which namespace.
func muxNext(t testing.TB, target string) (name string, routed bool) {
	mux := http.NewServeMux()
	mux.HandleFunc(nextPattern, func(w http.ResponseWriter, r *http.Request) {
		name, routed = r.PathValue("namespace"), true
	})
	mux.HandleFunc("/", func(http.ResponseWriter, *http.Request) {})
	r, err := http.NewRequest("GET", "http://flurry.test"+target, nil)
	if err != nil {
		t.Skip(err)
	}
	mux.ServeHTTP(httptest.NewRecorder(), r)
	return name, routed
}

// hotNextTakes reports whether hotNext serves target itself, and the namespace.
func hotNextTakes(t testing.TB, target string) (string, bool) {
	r, err := http.NewRequest("GET", "http://flurry.test"+target, nil)
	if err != nil {
		t.Skip(err)
	}
	if r.URL.RawPath != "" {
		return "", false
	}
	return nextPath(r.URL.Path)
}

func TestHotNextAgreesWithMux(t *testing.T) {
	for _, tc := range []struct {
		target string
		hot    bool
	}{
		{"/v1/default/next", true},
		{"/v1/default/next?count=3", true},
		{"/v1/a.b-c_d/next", true},
		{"/v1/./next", false},
		{"/v1/../next", false},
		{"/v1//next", false},
		{"/v1/a//next", false},
		{"/v1/a%2Fb/next", false},
		{"/v1/%64efault/next", false},
		{"/v1/default/next/", false},
		{"/v1/default/nextx", false},
		{"/v1/next", false},
		{"/v2/default/next", false},
		{"/v1/a/b/next", false},
	} {
		name, hot := hotNextTakes(t, tc.target)
		if hot != tc.hot {
			t.Errorf("%s: hot path %v, want %v", tc.target, hot, tc.hot)
		}
		if !hot {
			continue
		}
		if mname, routed := muxNext(t, tc.target); !routed || mname != name {
			t.Errorf("%s: hot path serves namespace %q; the mux routes it: %v, namespace %q", tc.target, name, routed, mname)
		}
	}
}

// TestHotNextServes: the server answers the hot path and the mux's route alike
// (a namespace that needs unescaping goes through the mux).
func TestHotNextServes(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	if !hotNextSafe(s.compatRoutes()) {
		t.Fatal("the one-ID route goes through the mux on a server without compatibility routes under /v1")
	}
	if hotNextSafe([]route{{"/v1/id/nextId", nil}}) {
		t.Error("a compatibility route under /v1 left the one-ID route before the mux")
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

// FuzzNextPath: every path hotNext serves itself is one ServeMux routes to the
// one-ID handler with the same namespace.
func FuzzNextPath(f *testing.F) {
	for _, p := range []string{"/v1/default/next", "/v1/./next", "/v1/a%2Fb/next", "/v1/%2e%2e/next", "/v1/a;b/next", "/v1/\u00e9/next"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, target string) {
		name, hot := hotNextTakes(t, target)
		if !hot {
			return
		}
		if mname, routed := muxNext(t, target); !routed || mname != name {
			t.Fatalf("%q: hot path serves namespace %q; the mux routes it: %v, namespace %q", target, name, routed, mname)
		}
	})
}
