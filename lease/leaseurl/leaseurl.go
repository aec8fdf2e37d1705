// Package leaseurl opens a lease.Store from a URL, choosing the store package by
// scheme. It imports the stores of the engine families the build includes (package
// internal/buildtags: the lean default has the file store only; -tags flurry_sql,
// flurry_redis, flurry_etcd or flurry_full add the others), so programs that want
// only one store should import that store's package instead.
//
//	file:///var/lib/flurry/leases             lease/filestore (the embedded default)
//	sqlite:///var/lib/flurry/leases.db        lease/sqlstore, SQLite
//	postgres://user@host:5432/db?sslmode=disable   lease/sqlstore, PostgreSQL
//	mysql://user:pass@host:3306/db            lease/sqlstore, MySQL or MariaDB
//	redis://[:pass@]host:6379/0               lease/redisstore
//	redis+sentinel://[:pass@]s1:26379,s2:26379,s3:26379/mymaster   lease/redisstore, via Sentinel
//	etcd://host:2379[,host:2379]/prefix       lease/etcdstore
//	postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write   the writable one of several
//
// docs/high-availability.md says what each engine's failover can lose.
// Each store's package documents the options its URL takes.
package leaseurl

import (
	"context"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
)

// openers is built per call, not kept in a package variable, so nothing here can be
// changed from outside. Each engine family's file (leaseurl_sql.go and so on) adds
// its schemes when its build tag is set.
func openers() map[string]storeurl.Opener[lease.Store] {
	m := map[string]storeurl.Opener[lease.Store]{
		"file": storeurl.ParseOpen[lease.Store](filestore.ParseURL, filestore.Open),
	}
	addSQL(m)
	addRedis(m)
	addEtcd(m)
	return m
}

// Schemes lists the URL schemes Open understands.
func Schemes() []string { return storeurl.Schemes(openers()) }

// Open returns the store a URL names. An unknown scheme is an error that lists the
// known ones, and the scheme of an engine this build leaves out is a
// *buildtags.NotBuiltError that names the build tag; errors never show the URL's
// password.
func Open(ctx context.Context, rawURL string) (lease.Store, error) {
	return storeurl.Open(ctx, "lease", rawURL, openers())
}

// Redact returns the URL with its password replaced by "xxxxx", for messages.
func Redact(rawURL string) string { return lease.RedactURL(rawURL) }
