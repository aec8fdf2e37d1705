package redisstore

import (
	"testing"

	"github.com/flurryid/flurry/verify/leasetest"
)

// FuzzParseURL: see leasetest.FuzzURL.
func FuzzParseURL(f *testing.F) {
	leasetest.FuzzURL(f, []string{"redis://:hunter2pw@127.0.0.1:6379/0?prefix=p", "rediss://u:hunter2pw@h:1/2?wait_replicas=1&wait_timeout=1s", "redis://h:1/x?bad=1"}, func(raw string) error {
		_, _, err := parseURLForFuzz(raw)
		return err
	})
}

func parseURLForFuzz(raw string) (any, any, error) {
	o, err := ParseURL(raw)
	return o, nil, err
}
