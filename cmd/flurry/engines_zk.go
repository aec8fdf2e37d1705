//go:build flurry_zk || flurry_full

package main

// The ZooKeeper lease store for lease store URLs (zk://); it registers itself
// with leaseurl when imported.
import (
	_ "github.com/flurryid/flurry/lease/zkstore"
)
