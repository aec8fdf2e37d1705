// Package leaseurl opens a lease.Store from a URL, choosing the store package by
// scheme. It imports every store, so programs that want only one should import that
// store's package instead.
//
//	file:///var/lib/flurry/leases             lease/filestore (the embedded default)
//	sqlite:///var/lib/flurry/leases.db        lease/sqlstore, SQLite
//	postgres://user@host:5432/db?sslmode=disable   lease/sqlstore, PostgreSQL
//	mysql://user:pass@host:3306/db            lease/sqlstore, MySQL or MariaDB
//	redis://[:pass@]host:6379/0               lease/redisstore
//	etcd://host:2379[,host:2379]/prefix       lease/etcdstore
//
// Each store's package documents the options its URL takes.
package leaseurl

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/etcdstore"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/lease/redisstore"
	"github.com/flurryid/flurry/lease/sqlstore"
)

// opener opens one kind of store.
type opener func(ctx context.Context, rawURL string) (lease.Store, error)

// openers is built per call, not kept in a package variable, so nothing here can be
// changed from outside.
func openers() map[string]opener {
	sql := func(ctx context.Context, u string) (lease.Store, error) {
		return sqlstore.Open(ctx, u, sqlstore.Options{})
	}
	rds := func(ctx context.Context, u string) (lease.Store, error) {
		return redisstore.Open(ctx, u, redisstore.Options{})
	}
	return map[string]opener{
		"file":       func(_ context.Context, u string) (lease.Store, error) { return filestore.Open(u) },
		"sqlite":     sql,
		"postgres":   sql,
		"postgresql": sql,
		"mysql":      sql,
		"redis":      rds,
		"rediss":     rds,
		"etcd": func(ctx context.Context, u string) (lease.Store, error) {
			return etcdstore.Open(ctx, u, etcdstore.Options{})
		},
	}
}

// Schemes lists the URL schemes Open understands.
func Schemes() []string {
	var out []string
	for k := range openers() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Open returns the store a URL names. An unknown scheme is an error that lists the
// known ones; errors never show the URL's password.
func Open(ctx context.Context, rawURL string) (lease.Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("lease: %q is not a store URL; use one of %s", Redact(rawURL), strings.Join(Schemes(), ", "))
	}
	open, ok := openers()[strings.ToLower(u.Scheme)]
	if !ok {
		return nil, fmt.Errorf("lease: unknown store scheme %q; use one of %s", u.Scheme, strings.Join(Schemes(), ", "))
	}
	return open(ctx, rawURL)
}

// Redact returns the URL with its password replaced by "xxxxx", for messages.
func Redact(rawURL string) string { return lease.RedactURL(rawURL) }
