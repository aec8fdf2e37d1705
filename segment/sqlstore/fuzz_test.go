package sqlstore

import (
	"testing"

	"github.com/flurryid/flurry/verify/leasetest"
)

// FuzzParseURL: see leasetest.FuzzURL, the URL-parser property every store keeps:
// an error never shows the password.
func FuzzParseURL(f *testing.F) {
	leasetest.FuzzURL(f, []string{"postgres://u:hunter2pw@127.0.0.1:5432/test?sslmode=disable&table=leaf_alloc", "mysql://root:hunter2pw@127.0.0.1:3306/test?table=t1", "sqlite:///tmp/x.db", "postgres://u:hunter2pw@[::1/x"}, func(raw string) error {
		_, err := ParseURL(raw)
		return err
	})
}
