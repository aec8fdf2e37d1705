package redisstore

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseURL: parsing any string never panics, and an error never shows the URL's
// password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://:hunter2pw@127.0.0.1:6379/0?prefix=p", "rediss://u:hunter2pw@h:1/2?wait_replicas=1&wait_timeout=1s", "redis://h:1/x?bad=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, _, err := parseURLForFuzz(raw)
		if err == nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(err.Error(), ":"+pw+"@") {
				t.Fatalf("error shows the password: %v", err)
			}
		}
		// A URL that does not parse: the password is what stands between ':' and '@'
		// in the authority, after "://".
		if _, rest, ok := strings.Cut(raw, "://"); perr != nil && ok && strings.Contains(err.Error(), "hunter2pw") {
			authority, _, _ := strings.Cut(rest, "/")
			if strings.Contains(authority, ":hunter2pw@") {
				t.Fatalf("error shows the password: %v", err)
			}
		}
	})
}

func parseURLForFuzz(raw string) (any, any, error) { return parseURL(raw, Options{}) }
