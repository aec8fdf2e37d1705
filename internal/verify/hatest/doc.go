// Package hatest runs the lease and segment stores against each engine's
// high-availability form, opened by URL as users write them, through a failover:
// a 3-member etcd cluster that loses its leader, Redis with Sentinel failing the
// primary over, and PostgreSQL reached through a host list whose first host
// refuses.
//
// Its tests are built with the engines' tags (flurry_full, or flurry_sql,
// flurry_redis, flurry_etcd); the lean default build has none of them.
package hatest
