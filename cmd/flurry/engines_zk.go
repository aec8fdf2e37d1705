//go:build flurry_zk || flurry_full

package main

// The ZooKeeper lease stores for lease store URLs (zk://, and leafzk:// in
// Meituan Leaf's worker registry); they register themselves with leaseurl when
// imported.
import (
	_ "github.com/flurryid/flurry/lease/leafzk"
	_ "github.com/flurryid/flurry/lease/zkstore"
)
