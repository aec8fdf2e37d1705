package server

import (
	"testing"
)

// TestServerHeader: GET /v1/info and Leaf's snowflake route, in both its forms,
// answer with "Flurry-Server: flurry", also when the route fails: lease/leafzk
// tells a flurry server from a running Leaf server by it alone (never by the
// info body, which can be large), and takes every answer without it for a Leaf
// server's.
func TestServerHeader(t *testing.T) {
	_, hs := newServer(t, "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n  plain:\n    strategy: uuidv7\n", nil)
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/info", 200},
		{"/api/snowflake/get/default", 200},
		{"/api/snowflake/get/any", 200},
		{"/api/snowflake/get/default/", 200},
	} {
		code, h, body := get(t, hs.URL+tc.path)
		if code != tc.code || h.Get(ServerHeader) != "flurry" || ServerHeader != "Flurry-Server" {
			t.Errorf("GET %s: %d, %s: %q (body %.80q); want %d with Flurry-Server: flurry", tc.path, code, ServerHeader, h.Get(ServerHeader), body, tc.code)
		}
	}
	// A server without a snowflake namespace fails Leaf's route, and still says
	// who it is.
	_, hs2 := newServer(t, "namespaces:\n  plain:\n    strategy: uuidv7\n", nil)
	code, h, _ := get(t, hs2.URL+"/api/snowflake/get/x")
	if code == 200 || h.Get(ServerHeader) != "flurry" {
		t.Errorf("GET /api/snowflake/get/x without a snowflake namespace: %d, Flurry-Server %q; want a failure with Flurry-Server: flurry", code, h.Get(ServerHeader))
	}
}
