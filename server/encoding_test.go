package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
)

// TestNextEncodings: encoding= (and format=NAME, its short form) gives the IDs
// of next in that encoding, as JSON strings or text lines, in the order issued.
func TestNextEncodings(t *testing.T) {
	_, hs := newServer(t, `
namespaces:
  default: {strategy: snowflake}
  uu: {strategy: uuidv7}
`, nil)
	for _, name := range flurry.EncodingNames() {
		enc, _ := flurry.ParseEncoding(name)
		for _, q := range []string{"count=3000&encoding=" + name, "format=" + name + "&count=3000", "format=text&count=3000&encoding=" + name} {
			res, body := corsDo(t, "GET", hs.URL+"/v1/default/next?"+q, nil, "")
			if res.StatusCode != 200 {
				t.Fatalf("%s: %d %s", q, res.StatusCode, body)
			}
			var ids []string
			if strings.HasPrefix(q, "format=text") {
				ids = strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			} else {
				var v struct{ IDs []string }
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Fatalf("%s: %v: %.200s", q, err, body)
				}
				ids = v.IDs
			}
			if len(ids) != 3000 {
				t.Fatalf("%s: %d IDs", q, len(ids))
			}
			var last flurry.ID
			for _, s := range ids {
				id, err := enc.Parse(s)
				if err != nil || id <= last || enc.Format(id) != s {
					t.Fatalf("%s: %q -> %d, %v after %d", q, s, id, err, last)
				}
				last = id
			}
		}
	}
	// decode reads the ID back in its encoding, to the same decimal ID.
	for _, name := range flurry.EncodingNames() {
		enc, _ := flurry.ParseEncoding(name)
		id := flurry.ID(253705720927617024)
		res, body := corsDo(t, "GET", hs.URL+"/v1/default/decode/"+url.PathEscape(enc.Format(id))+"?encoding="+name, nil, "")
		if res.StatusCode != 200 || !strings.Contains(body, `"id":"253705720927617024"`) {
			t.Errorf("decode of %s %q: %d %s", name, enc.Format(id), res.StatusCode, body)
		}
	}
	// Crockford's Base32 as people retype it: lowercase, O for 0, L for 1.
	id := flurry.ID(253705720927617024)
	typed := strings.NewReplacer("0", "o", "1", "L").Replace(strings.ToLower(id.Crockford32()))
	if res, body := corsDo(t, "GET", hs.URL+"/v1/default/decode/"+typed+"?encoding=crockford32", nil, ""); res.StatusCode != 200 || !strings.Contains(body, `"id":"253705720927617024"`) {
		t.Errorf("decode of crockford32 %q: %d %s", typed, res.StatusCode, body)
	}
	for _, c := range []struct{ path, want string }{
		{"/v1/default/decode/4zzv0rZaYpj?encoding=base58", "is not base58"},
		{"/v1/default/decode/7U?encoding=crockford32", "is not crockford32"},
		{"/v1/default/next?encoding=base85", "base62, crockford32"},
		{"/v1/default/decode/1?encoding=base85", "use one of decimal"},
		{"/v1/uu/decode/1?encoding=hex", "text IDs"},
		{"/v1/default/next?encoding=base85", "use one of decimal, hex, base2"},
		{"/v1/default/next?format=base85", "or an encoding: decimal"},
		{"/v1/default/next?format=number&encoding=base58", "format=number gives decimal numbers"},
		{"/v1/uu/next?encoding=base58", "text IDs"},
	} {
		res, body := corsDo(t, "GET", hs.URL+c.path, nil, "")
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want 400 saying %q", c.path, res.StatusCode, body, c.want)
		}
	}
}
