//go:build !(flurry_full || flurry_etcd)

package buildtags

const etcdBuilt = false
