package zkstore

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leaseurl"
)

// Importing the package registers its URL scheme with lease/leaseurl, so that
// leaseurl.Open opens it.
func init() {
	leaseurl.Register("zk", storeurl.ParseOpen[lease.Store](ParseURL, Open))
}
