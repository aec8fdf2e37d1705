package etcdstore

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
)

// Importing the package registers its URL schemes with lease/leaseurl, so that
// leaseurl.Open opens them.
func init() {
	open := storeurl.ParseOpen[lease.Store](ParseURL, Open)
	for _, s := range []string{"etcd"} {
		leaseurl.Register(s, open)
	}
}
