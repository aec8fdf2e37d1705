//go:build flurry_etcd || flurry_full

package buildtags

func init() { compiled = append(compiled, "etcd") }
