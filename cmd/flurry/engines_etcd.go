//go:build flurry_etcd || flurry_full

package main

// The etcd engines for lease and segment store URLs; they register themselves
// with leaseurl and segmenturl when imported.
import (
	_ "github.com/flurryid/flurry/lease/etcdstore"
	_ "github.com/flurryid/flurry/segment/etcdstore"
)
