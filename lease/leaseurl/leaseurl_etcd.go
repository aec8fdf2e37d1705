//go:build flurry_full || flurry_etcd

package leaseurl

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/etcdstore"
)

func addEtcd(m map[string]storeurl.Opener[lease.Store]) {
	m["etcd"] = func(ctx context.Context, u string) (lease.Store, error) {
		return etcdstore.Open(ctx, u, etcdstore.Options{})
	}
}
