//go:build flurry_full || flurry_etcd

package leaseurl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/etcdstore"
)

func addEtcd(m map[string]storeurl.Opener[lease.Store]) {
	storeurl.Register(m, "etcd", storeurl.ParseOpen[lease.Store](etcdstore.ParseURL, etcdstore.Open))
}
