//go:build flurry_full || flurry_etcd

package segmenturl

import (
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/etcdstore"
)

func addEtcd(m map[string]storeurl.Opener[segment.Store]) {
	storeurl.Register(m, "etcd", storeurl.ParseOpen[segment.Store](etcdstore.ParseURL, etcdstore.Open))
}
