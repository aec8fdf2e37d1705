//go:build flurry_etcd || flurry_full

package enginetags

import (
	_ "github.com/flurryid/flurry/lease/etcdstore"
	_ "github.com/flurryid/flurry/segment/etcdstore"
)
