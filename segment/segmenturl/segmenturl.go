// Package segmenturl opens a segment.Store from a URL, choosing the store package by
// scheme. It imports the stores of the engine families the build includes (package
// internal/buildtags: the lean default has the file store only; -tags flurry_sql,
// flurry_redis, flurry_etcd or flurry_full add the others), so programs that want
// only one store should import that store's package instead.
//
//	file:///var/lib/flurry/segments               segment/filestore (the embedded default)
//	sqlite:///var/lib/flurry/segments.db          segment/sqlstore, SQLite
//	postgres://user@host:5432/db?sslmode=disable  segment/sqlstore, PostgreSQL
//	mysql://user:pass@host:3306/db                segment/sqlstore, MySQL or MariaDB
//	redis://[:pass@]host:6379/0                   segment/redisstore
//	redis+sentinel://[:pass@]s1:26379,s2:26379,s3:26379/mymaster   segment/redisstore, via Sentinel
//	etcd://host:2379[,host:2379]/prefix           segment/etcdstore
//	postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write   the writable one of several
//
// The SQL stores take ?table=leaf_alloc to serve an existing Meituan Leaf table,
// ?schema=leaf to serve it with only Leaf's privileges, and ?table=tiny_id_info (or
// ?schema=tinyid) to serve didi tinyid's table (sqlstore.OpenAny). Each store's
// package documents the options its URL takes; docs/high-availability.md says what
// each engine's failover can lose.
package segmenturl

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/filestore"
)

// openers is built per call, not kept in a package variable, so nothing here can be
// changed from outside. Each engine family's file (segmenturl_sql.go and so on)
// adds its schemes when its build tag is set.
func openers(skipCreate bool) map[string]storeurl.Opener[segment.Store] {
	m := map[string]storeurl.Opener[segment.Store]{
		"file": storeurl.ParseOpen[segment.Store](filestore.ParseURL, filestore.Open),
	}
	addSQL(m, skipCreate)
	addRedis(m)
	addEtcd(m)
	return m
}

// Schemes lists the URL schemes Open understands.
func Schemes() []string { return storeurl.Schemes(openers(false)) }

// Open returns the store a URL names. An unknown scheme is an error that lists the
// known ones, and the scheme of an engine this build leaves out is a
// *buildtags.NotBuiltError that names the build tag; errors never show the URL's
// password.
func Open(ctx context.Context, rawURL string) (segment.Store, error) {
	return storeurl.Open(ctx, "segment", rawURL, openers(false))
}

// OpenExisting is Open for a caller that only reads or changes existing tags (a
// listing, say): the SQL stores do not create their tables, so reading a database
// that has none fails instead of leaving empty tables behind. The other stores
// create nothing before a tag is created either way.
func OpenExisting(ctx context.Context, rawURL string) (segment.Store, error) {
	return storeurl.Open(ctx, "segment", rawURL, openers(true))
}
