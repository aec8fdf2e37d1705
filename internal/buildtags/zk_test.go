//go:build flurry_zk || flurry_full

package buildtags

func init() { compiled = append(compiled, "ZooKeeper") }
