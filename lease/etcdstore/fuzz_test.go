package etcdstore

import (
	"testing"

	"github.com/flurryid/flurry/verify/leasetest"
)

// FuzzParseURL: see leasetest.FuzzURL.
func FuzzParseURL(f *testing.F) {
	leasetest.FuzzURL(f, []string{"etcd://u:hunter2pw@127.0.0.1:2379,127.0.0.1:2380/pfx?dial_timeout=2s", "etcd://h:1//abs", "etcd://h:1/?x=1"}, func(raw string) error {
		_, _, err := parseURLForFuzz(raw)
		return err
	})
}

func parseURLForFuzz(raw string) (any, any, error) {
	o, err := ParseURL(raw)
	return o, nil, err
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"0", "42", "-1", "007", "1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := parseValue(s); ok && v < 0 {
			t.Fatalf("parseValue(%q) = %d", s, v)
		}
	})
}
