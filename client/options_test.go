package client

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParseServers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"http://127.0.0.1:8080", []string{"http://127.0.0.1:8080"}, ""},
		{"127.0.0.1:8080", []string{"http://127.0.0.1:8080"}, ""},
		{" a:1 , https://b/ids/ ,", []string{"http://a:1", "https://b/ids"}, ""},
		{"[::1]:8080", []string{"http://[::1]:8080"}, ""},
		{"", nil, "no server address"},
		{" , ", nil, "no server address"},
		{"ftp://a", nil, "scheme"},
		{"http://", nil, "no host"},
		{"http://:80", nil, "no host"},
		{"http://u:p@a:1", nil, "user information"},
		{"http://a:1?x=1", nil, "query"},
		{"http://a:1#f", nil, "fragment"},
		{"http://a:99999", nil, "65535"},
		{"http://a:x1", nil, "port"},
	} {
		got, err := ParseServers(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseServers(%q): %v, want an error with %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), ":p@") {
				t.Errorf("ParseServers(%q): the error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseServers(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseServers checks that every accepted address is an http(s) URL with a
// host and nothing else, and that parsing is idempotent.
func FuzzParseServers(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080", "a:1,b:2", "https://[::1]:443/x/", "http://u@h", "h:0", "%zz", "http://a b", ":", "//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := ParseServers(s)
		if err != nil {
			return
		}
		if len(list) == 0 {
			t.Fatalf("ParseServers(%q): no error and no server", s)
		}
		for _, u := range list {
			p, err := url.Parse(u)
			if err != nil {
				t.Fatalf("ParseServers(%q) gave %q, not a URL: %v", s, u, err)
			}
			if (p.Scheme != "http" && p.Scheme != "https") || p.Hostname() == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
				t.Fatalf("ParseServers(%q) gave %q", s, u)
			}
			again, err := ParseServers(u)
			if err != nil || len(again) != 1 || again[0] != u {
				t.Fatalf("ParseServers(%q) = %q, %v: not idempotent on %q", u, again, err, s)
			}
		}
	})
}
