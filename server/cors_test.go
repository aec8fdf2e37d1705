package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/flurryid/flurry/server/config"
)

const corsApp = "https://app.example.com"

func corsServer(t *testing.T, cors string) string {
	t.Helper()
	_, hs := newServer(t, cors+`
namespaces:
  default:
    strategy: snowflake
    token_env: [TEST_TOKEN]
`, nil)
	return hs.URL
}

func corsDo(t *testing.T, method, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// preflight is what Chromium sends before the TypeScript client's Connect call
// (a POST with JSON and a token) and before a GET of next with a token.
func preflight(origin, method, headers string) map[string]string {
	return map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}
}

func hasToken(list, tok string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(v), tok) {
			return true
		}
	}
	return false
}

func TestCORSAllowedOrigin(t *testing.T) {
	base := corsServer(t, "cors: {origins: [\""+corsApp+"\", \"http://localhost:5173\"]}\n")
	for _, c := range []struct{ path, method, headers string }{
		{"/flurry.v1.IDService/Next", "POST", "authorization,connect-protocol-version,content-type"},
		{"/flurry.v1.IDService/Decode", "POST", "connect-protocol-version,content-type,connect-timeout-ms"},
		{"/flurry.v1.IDService/Next", "POST", "content-type,x-grpc-web,x-user-agent,grpc-timeout"},
		{"/v1/default/next?count=3", "GET", "authorization"},
		{"/v1/default/decode/1", "GET", "authorization,accept"},
	} {
		res, body := corsDo(t, "OPTIONS", base+c.path, preflight(corsApp, c.method, c.headers), "")
		h := res.Header
		if res.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != corsApp {
			t.Fatalf("preflight of %s %s: %d, Allow-Origin %q, %s", c.method, c.path, res.StatusCode, h.Get("Access-Control-Allow-Origin"), body)
		}
		if !hasToken(h.Get("Access-Control-Allow-Methods"), c.method) {
			t.Errorf("preflight of %s %s: Allow-Methods %q", c.method, c.path, h.Get("Access-Control-Allow-Methods"))
		}
		for _, want := range strings.Split(c.headers, ",") {
			if !hasToken(h.Get("Access-Control-Allow-Headers"), want) {
				t.Errorf("preflight of %s: Allow-Headers %q lacks %s", c.path, h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if !hasToken(strings.Join(h.Values("Vary"), ","), "Origin") || h.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("preflight of %s: Vary %q, Max-Age %q", c.path, h.Values("Vary"), h.Get("Access-Control-Max-Age"))
		}
		if h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight allows credentials")
		}
	}

	// The calls themselves: the origin is named, the headers a client reads
	// are exposed, and a token is still required.
	res, body := corsDo(t, "GET", base+"/v1/default/next", map[string]string{"Origin": corsApp}, "")
	if res.StatusCode != 401 || res.Header.Get("Access-Control-Allow-Origin") != corsApp {
		t.Fatalf("GET without a token from an allowed origin: %d, Allow-Origin %q: %s", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"), body)
	}
	auth := map[string]string{"Origin": "http://localhost:5173", "Authorization": "Bearer " + testToken}
	res, body = corsDo(t, "GET", base+"/v1/default/next?count=2", auth, "")
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		!strings.Contains(body, `"ids":[`) {
		t.Fatalf("GET with a token: %d, Allow-Origin %q: %s", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"), body)
	}
	for _, want := range []string{"Retry-After", "Www-Authenticate", "Grpc-Status", ServerHeader} {
		if !hasToken(res.Header.Get("Access-Control-Expose-Headers"), want) {
			t.Errorf("Expose-Headers %q lacks %s", res.Header.Get("Access-Control-Expose-Headers"), want)
		}
	}
	if !hasToken(strings.Join(res.Header.Values("Vary"), ","), "Origin") {
		t.Errorf("GET: Vary %q lacks Origin", res.Header.Values("Vary"))
	}
	auth["Content-Type"], auth["Connect-Protocol-Version"] = "application/json", "1"
	res, body = corsDo(t, "POST", base+"/flurry.v1.IDService/Next", auth, `{"namespace":"default","count":2}`)
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || !strings.Contains(body, "ids") {
		t.Fatalf("Connect Next: %d, Allow-Origin %q: %s", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"), body)
	}

	// Another origin: no Allow-Origin, so the browser keeps the answer from
	// the page; its preflight is refused saying what to configure.
	res, body = corsDo(t, "OPTIONS", base+"/flurry.v1.IDService/Next", preflight("https://evil.example", "POST", "content-type"), "")
	if res.StatusCode != 403 || res.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(body, "cors.origins") {
		t.Fatalf("preflight from another origin: %d, Allow-Origin %q: %s", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"), body)
	}
	for _, o := range []string{"https://evil.example", "https://app.example.com.evil.example", "http://app.example.com", "null"} {
		res, _ = corsDo(t, "GET", base+"/v1/default/next", map[string]string{"Origin": o, "Authorization": "Bearer " + testToken}, "")
		if v := res.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("GET from %s: Allow-Origin %q", o, v)
		}
	}
}

func TestCORSOffByDefault(t *testing.T) {
	base := corsServer(t, "")
	res, _ := corsDo(t, "OPTIONS", base+"/flurry.v1.IDService/Next", preflight(corsApp, "POST", "content-type"), "")
	if res.StatusCode/100 == 2 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight with no cors.origins: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}
	res, _ = corsDo(t, "GET", base+"/v1/default/next", map[string]string{"Origin": corsApp, "Authorization": "Bearer " + testToken}, "")
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("GET with no cors.origins: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestCORSConfigRefuses(t *testing.T) {
	for o, want := range map[string]string{
		"*":                         "list each origin",
		"null":                      "list each origin",
		"https://app.example.com/":  "more than scheme://host",
		"https://app.example.com/x": "more than scheme://host",
		"app.example.com":           "scheme://host",
		"ftp://app.example.com":     "scheme://host",
		"https://App.example.com":   "lowercase",
	} {
		_, err := config.Parse("t.yaml", []byte("cors: {origins: [\""+o+"\"]}\nnamespaces: {default: {strategy: snowflake}}\n"), nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "cors.origins") {
			t.Errorf("origin %q: %v; want an error at cors.origins saying %q", o, err, want)
		}
	}
	if _, err := config.Parse("t.yaml", []byte("cors: {origins: [\"http://localhost:5173\"], max_age: 1m}\nnamespaces: {default: {strategy: snowflake}}\n"), nil); err != nil {
		t.Errorf("a good cors section: %v", err)
	}
}
