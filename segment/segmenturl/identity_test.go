package segmenturl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestStoreIdentity: two opens of one segment store report one identity; the same engine
// with another table, prefix or directory reports another; the file store is
// private, the others are not.
func TestStoreIdentity(t *testing.T) {
	query := func(u, kv string) string {
		if strings.Contains(u, "?") {
			return u + "&" + kv
		}
		return u + "?" + kv
	}
	for _, c := range []struct {
		scheme  string
		svc     *testenv.Service
		other   func(string) string
		private bool
	}{
		{"file", nil, nil, true},
		{"postgres", &testenv.Postgres, func(u string) string { return query(u, "table=flurry_segment_identity") }, false},
		{"mysql", &testenv.MySQL, func(u string) string { return query(u, "table=flurry_segment_identity") }, false},
		{"redis", &testenv.Redis, func(u string) string { return query(u, "prefix=flurry:segment-identity-test") }, false},
		{"etcd", &testenv.Etcd, func(u string) string { return u + "/flurry-segment-identity-test" }, false},
	} {
		t.Run(c.scheme, func(t *testing.T) {
			var base, other string
			if c.svc == nil {
				base, other = "file://"+t.TempDir(), "file://"+t.TempDir()
			} else {
				testenv.NeedScheme(t, c.scheme)
				base = c.svc.URL(t)
				other = c.other(base)
			}
			id := func(u string) segment.StoreIdentity {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				st, err := segmenturl.Open(ctx, u)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				idf, ok := st.(segment.Identifier)
				if !ok {
					t.Fatalf("%T has no Identity method", st)
				}
				got, err := idf.Identity(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			a, b, o := id(base), id(base), id(other)
			t.Logf("%s: %+v; other: %+v", c.scheme, a, o)
			if a.ID == "" || a != b {
				t.Errorf("two opens of one store: %+v and %+v, want one identity", a, b)
			}
			if o.ID == a.ID {
				t.Errorf("another table, prefix or directory: the same identity %q", a.ID)
			}
			if a.Private != c.private || o.Private != c.private {
				t.Errorf("private = %v, %v; want %v", a.Private, o.Private, c.private)
			}
		})
	}
}
