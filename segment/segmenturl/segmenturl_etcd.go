//go:build flurry_full || flurry_etcd

package segmenturl

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/etcdstore"
)

func addEtcd(m map[string]storeurl.Opener[segment.Store]) {
	m["etcd"] = func(ctx context.Context, u string) (segment.Store, error) {
		return etcdstore.Open(ctx, u, etcdstore.Options{})
	}
}
