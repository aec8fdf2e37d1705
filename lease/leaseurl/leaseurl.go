// Package leaseurl opens a lease.Store from a URL, choosing the store package by
// scheme. The file store is always there; every other store package registers
// its schemes here when a program imports it, as database/sql drivers do:
//
//	import (
//		"github.com/flurryid/flurry/lease/leaseurl"
//		_ "github.com/flurryid/flurry/lease/sqlstore" // sqlite, postgres, mysql
//	)
//
//	store, err := leaseurl.Open(ctx, "postgres://flurry@db:5432/ids")
//
// The URLs, and the package that serves each:
//
//	file:///var/lib/flurry/leases             lease/filestore (the embedded default; always there)
//	sqlite:///var/lib/flurry/leases.db        lease/sqlstore, SQLite
//	postgres://user@host:5432/db?sslmode=disable   lease/sqlstore, PostgreSQL
//	mysql://user:pass@host:3306/db            lease/sqlstore, MySQL or MariaDB
//	redis://[:pass@]host:6379/0               lease/redisstore
//	redis+sentinel://[:pass@]s1:26379,s2:26379,s3:26379/mymaster   lease/redisstore, via Sentinel
//	etcd://host:2379[,host:2379]/prefix       lease/etcdstore
//	zk://host:2181[,host:2181]/prefix         lease/zkstore (ZooKeeper)
//	leafzk://host:2181/{leaf.name}?addr=ip:port   lease/leafzk (Meituan Leaf's worker registry)
//	postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write   the writable one of several
//
// A scheme whose package the program does not import is refused with an error
// that names the package to import. The flurry command imports the store
// packages by build tag (-tags flurry_sql, flurry_redis, flurry_etcd,
// flurry_zk or flurry_full; docs/building.md), and its error names the tag
// instead. A program that uses one store only can import that store's package and
// call its Open, without this package.
//
// docs/high-availability.md says what each engine's failover can lose.
// Each store's package documents the options its URL takes.
package leaseurl

import (
	"context"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
)

// An Opener opens the lease store a URL names. It parses the whole URL (the
// scheme is one it registered for) and refuses options it does not know.
type Opener func(ctx context.Context, rawURL string) (lease.Store, error)

func init() {
	Register("file", storeurl.ParseOpen[lease.Store](filestore.ParseURL, filestore.Open))
}

// Register makes open the Opener of a URL scheme (matched in any case). A store
// package calls it from its init function, once per scheme it serves, so that
// importing the package is all a program does to open its URLs here.
//
// The schemes live in one registry for the whole program, written only while
// packages initialize and safe for concurrent use after. Register panics if open
// is nil, if scheme is not a URL scheme, or if the scheme is registered twice, as
// sql.Register does.
func Register(scheme string, open Opener) {
	if open == nil {
		panic("leaseurl: Register of a nil Opener for " + scheme)
	}
	engines.Register(engines.LeaseStore, scheme, open)
}

// Schemes lists the URL schemes Open understands in this program, sorted: file,
// and those the imported store packages registered.
func Schemes() []string { return engines.Names(engines.LeaseStore) }

// Open returns the store a URL names, opened by the package registered for its
// scheme. An unknown scheme is an error that lists the registered ones, and the
// scheme of a flurry store whose package this program does not import is an error
// that names the package (in the flurry command, the build tag that adds it);
// errors never show the URL's password.
func Open(ctx context.Context, rawURL string) (lease.Store, error) {
	open, err := storeurl.Lookup[Opener]("lease", engines.LeaseStore, rawURL)
	if err != nil {
		return nil, err
	}
	return open(ctx, rawURL)
}

// Redact returns the URL with its password replaced by "xxxxx", for messages.
func Redact(rawURL string) string { return lease.RedactURL(rawURL) }
