// Package segmenturl opens a segment.Store from a URL, choosing the store package
// by scheme. The file store is always there; every other store package registers
// its schemes here when a program imports it, as database/sql drivers do:
//
//	import (
//		"github.com/flurryid/flurry/segment/segmenturl"
//		_ "github.com/flurryid/flurry/segment/sqlstore" // sqlite, postgres, mysql
//	)
//
//	store, err := segmenturl.Open(ctx, "mysql://flurry:pw@db:3306/ids")
//
// The URLs, and the package that serves each:
//
//	file:///var/lib/flurry/segments               segment/filestore (the embedded default; always there)
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
//
// A scheme whose package the program does not import is refused with an error
// that names the package to import. The flurry command imports the store
// packages by build tag (-tags flurry_sql, flurry_redis, flurry_etcd or
// flurry_full; docs/building.md), and its error names the tag instead.
package segmenturl

import (
	"context"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/filestore"
)

// An Opener opens the segment store a URL names. It parses the whole URL (the
// scheme is one it registered for) and refuses options it does not know.
type Opener func(ctx context.Context, rawURL string, o OpenOptions) (segment.Store, error)

// OpenOptions says how a store is opened. The zero OpenOptions is Open's.
type OpenOptions struct {
	// Existing is set by OpenExisting: the caller only reads or changes tags that
	// exist, so a store that creates its tables (or files) when it opens must not:
	// opening a database that has none fails instead of leaving empty tables
	// behind. Stores that create nothing before a tag is created ignore it.
	Existing bool
}

func init() {
	file := storeurl.ParseOpen[segment.Store](filestore.ParseURL, filestore.Open)
	Register("file", func(ctx context.Context, rawURL string, _ OpenOptions) (segment.Store, error) {
		return file(ctx, rawURL)
	})
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
		panic("segmenturl: Register of a nil Opener for " + scheme)
	}
	engines.Register(engines.SegmentStore, scheme, open)
}

// Schemes lists the URL schemes Open understands in this program, sorted: file,
// and those the imported store packages registered.
func Schemes() []string { return engines.Names(engines.SegmentStore) }

// Open returns the store a URL names, opened by the package registered for its
// scheme. An unknown scheme is an error that lists the registered ones, and the
// scheme of a flurry store whose package this program does not import is an error
// that names the package (in the flurry command, the build tag that adds it);
// errors never show the URL's password.
func Open(ctx context.Context, rawURL string) (segment.Store, error) {
	return open(ctx, rawURL, OpenOptions{})
}

// OpenExisting is Open for a caller that only reads or changes existing tags (a
// listing, say): the SQL stores do not create their tables, so reading a database
// that has none fails instead of leaving empty tables behind. The other stores
// create nothing before a tag is created either way.
func OpenExisting(ctx context.Context, rawURL string) (segment.Store, error) {
	return open(ctx, rawURL, OpenOptions{Existing: true})
}

func open(ctx context.Context, rawURL string, o OpenOptions) (segment.Store, error) {
	opener, err := storeurl.Lookup[Opener]("segment", engines.SegmentStore, rawURL)
	if err != nil {
		return nil, err
	}
	return opener(ctx, rawURL, o)
}
