// Package hatest runs the lease and segment stores against each engine's
// high-availability form, opened by URL as users write them, through a failover:
// a 3-member etcd cluster that loses its leader, Redis with Sentinel failing the
// primary over, PostgreSQL reached through a host list whose first host refuses,
// and a 3-member ZooKeeper ensemble that loses its leader (leases only).
//
// Its tests are built with the engines' tags (flurry_full, or flurry_sql,
// flurry_redis, flurry_etcd, flurry_zk); the lean default build has none of them.
package hatest
