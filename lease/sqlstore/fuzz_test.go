package sqlstore

import (
	"testing"

	"github.com/flurryid/flurry/verify/leasetest"
)

// FuzzParseURL: see leasetest.FuzzURL.
func FuzzParseURL(f *testing.F) {
	leasetest.FuzzURL(f, []string{"postgres://u:hunter2pw@127.0.0.1:5432/test?sslmode=disable", "mysql://root:hunter2pw@127.0.0.1:3306/test?table=t1", "sqlite:///tmp/x.db", "postgres://u:hunter2pw@[::1/x"}, func(raw string) error {
		_, _, err := parseURLForFuzz(raw)
		return err
	})
}

func parseURLForFuzz(raw string) (any, any, error) {
	o, err := ParseURL(raw)
	return o, nil, err
}
