// Package segmenturl opens a segment.Store from a URL, choosing the store package by
// scheme. It imports every store, so programs that want only one should import that
// store's package instead.
//
//	sqlite:///var/lib/flurry/segments.db          segment/sqlstore, SQLite (the embedded default)
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
	"net/url"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/etcdstore"
	"github.com/flurryid/flurry/segment/redisstore"
	"github.com/flurryid/flurry/segment/sqlstore"
)

// openers is built per call, not kept in a package variable, so nothing here can be
// changed from outside.
func openers(skipCreate bool) map[string]storeurl.Opener[segment.Store] {
	sql := func(ctx context.Context, u string) (segment.Store, error) {
		o, err := sqlstore.ParseURL(u)
		if err != nil {
			return nil, err
		}
		o.SkipCreate = skipCreate && plainSchema(u)
		return sqlstore.OpenAny(ctx, o)
	}
	rds := func(ctx context.Context, u string) (segment.Store, error) {
		return storeurl.ParseOpen[segment.Store](redisstore.ParseURL, redisstore.Open)(ctx, u)
	}
	return map[string]storeurl.Opener[segment.Store]{
		"sqlite":     sql,
		"postgres":   sql,
		"postgresql": sql,
		"mysql":      sql,
		"redis":      rds,
		"rediss":     rds,
		// Redis Sentinel: the primary of a master name, followed through failovers.
		"redis+sentinel":  rds,
		"rediss+sentinel": rds,
		"etcd": func(ctx context.Context, u string) (segment.Store, error) {
			return storeurl.ParseOpen[segment.Store](etcdstore.ParseURL, etcdstore.Open)(ctx, u)
		},
	}
}

// Schemes lists the URL schemes Open understands.
func Schemes() []string { return storeurl.Schemes(openers(false)) }

// Open returns the store a URL names. An unknown scheme is an error that lists the
// known ones; errors never show the URL's password.
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

// plainSchema reports whether a SQL URL uses flurry's own tables by default (no
// schema= key, no tiny_id_info table): the case where Open would create tables. The
// Leaf and TinyID schemas never create any.
func plainSchema(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	q := u.Query()
	return !q.Has("schema") && q.Get("table") != sqlstore.TinyIDTable
}
