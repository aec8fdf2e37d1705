package sqlstore

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseURL: parsing any string never panics, and an error never shows the URL's
// password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"postgres://u:hunter2pw@127.0.0.1:5432/test?sslmode=disable", "mysql://root:hunter2pw@127.0.0.1:3306/test?table=t1", "sqlite:///tmp/x.db", "postgres://u:hunter2pw@[::1/x"} {
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

func parseURLForFuzz(raw string) (any, any, error) {
	c, err := parseURL(raw, Options{})
	return c, nil, err
}
