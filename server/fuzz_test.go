package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/server/config"
)

// serveFuzz runs one request through the handler and checks what must hold for
// any input: no panic (a panic fails the fuzzer), a known status, and an error
// body of one line.
func serveFuzz(t *testing.T, h http.Handler, method, target string, hdr http.Header) {
	req, err := http.NewRequest(method, "http://flurry.test"+target, nil)
	if err != nil {
		return
	}
	req.Header = hdr
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	switch rec.Code {
	case 200, 301, 307, 308, 400, 401, 404, 405, 500, 503: // 30x: ServeMux cleans paths such as // by redirecting
	default:
		t.Fatalf("%s %q: status %d", method, target, rec.Code)
	}
	if rec.Code == 500 && !strings.HasPrefix(target, "/api/") {
		t.Fatalf("%s %q: 500 %q", method, target, rec.Body.String())
	}
	if rec.Code >= 400 && rec.Code != 405 && strings.Count(rec.Body.String(), "\n") != 1 {
		t.Fatalf("%s %q: error body not one line: %q", method, target, rec.Body.String())
	}
}

func FuzzNextRoute(f *testing.F) {
	s, _ := newServer(f, basicYAML, nil)
	for _, seed := range []string{"default", "orders", "secret", "nope", "", "%00", "a/b"} {
		f.Add(seed, "count=3&format=number", "text/plain", "Bearer "+testToken)
	}
	f.Add("default", "count=%zz&format=%", "", "")
	f.Add("default", "count=5&format=base58", "", "")
	f.Add("default", "count=3000&format=text&encoding=base64", "", "")
	f.Add("default", "count=99999999999999999999", "", "Bearer")
	f.Fuzz(func(t *testing.T, ns, query, accept, auth string) {
		hdr := http.Header{}
		hdr.Set("Accept", accept)
		hdr.Set("Authorization", auth)
		serveFuzz(t, s.Handler(), "GET", "/v1/"+ns+"/next?"+query, hdr)
		serveFuzz(t, s.Handler(), "GET", "/api/segment/get/"+ns+"?"+query, hdr)
		serveFuzz(t, s.Handler(), "GET", "/api/snowflake/get/"+ns, hdr)
	})
}

func FuzzDecodeRoute(f *testing.F) {
	s, _ := newServer(f, basicYAML, nil)
	for _, seed := range []string{"1", "0", "-1", "9223372036854775807", "9223372036854775808", "abc", "", "1e5", "%20"} {
		f.Add("default", seed)
		f.Add("orders", seed)
	}
	f.Fuzz(func(t *testing.T, ns, id string) {
		serveFuzz(t, s.Handler(), "GET", "/v1/"+ns+"/decode/"+id, nil)
		for _, enc := range flurry.EncodingNames() {
			serveFuzz(t, s.Handler(), "GET", "/v1/"+ns+"/decode/"+id+"?encoding="+enc, nil)
		}
		serveFuzz(t, s.Handler(), "GET", "/decodeSnowflakeId?snowflakeId="+id+"&namespace="+ns, nil)
	})
}

func FuzzConfig(f *testing.F) {
	f.Add([]byte(basicYAML))
	f.Add([]byte("namespaces:\n  a: {strategy: segment, segment: {stores: [x], prefetch: 3}}\n"))
	f.Add([]byte("listen: [\n"))
	f.Add([]byte("namespaces: {a: {strategy: redis}}"))
	f.Add([]byte("namespaces: {a: {strategy: snowflake, snowflake: {layout: 'time:41:1ms:2025-01-01T00:00:00Z,seq:22'}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse("f.yaml", data, nil)
		if err == nil && len(c.Namespaces) == 0 {
			t.Fatalf("accepted a configuration without namespaces")
		}
		if err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("empty error")
		}
	})
}

// FuzzRPCBody sends any body, content type and token to the IDService's
// procedures: a known status, never a panic, and never an ID without the token.
func FuzzRPCBody(f *testing.F) {
	s, _ := newServer(f, basicYAML, nil)
	f.Add("Next", "application/json", `{"namespace":"secret","count":3}`, "")
	f.Add("Next", "application/json", `{"namespace":"default","count":4000000000}`, "Bearer "+testToken)
	f.Add("Info", "application/json", `{}`, "Bearer "+testAdmin)
	f.Add("Decode", "application/proto", "\x0a\x06secret\x12\x011", "Bearer x")
	f.Add("Next", "application/grpc-web+proto", "\x00\x00\x00\x00\x08\x0a\x06secret", "")
	f.Fuzz(func(t *testing.T, proc, ctype, body, auth string) {
		req := httptest.NewRequest("POST", "/flurry.v1.IDService/"+proc, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 401, 404, 405, 408, 409, 413, 415, 429, 499, 500, 501, 502, 503, 504:
		default:
			t.Fatalf("%s %q %q: status %d", proc, ctype, body, rec.Code)
		}
		if rec.Code == 200 && proc == "Next" && auth != "Bearer "+testToken && strings.Contains(body, "secret") &&
			strings.Contains(rec.Body.String(), `"secret"`) {
			t.Fatalf("IDs of namespace secret without its token: %q", rec.Body.String())
		}
	})
}
