// Package buildtags says which store engines this build of flurry includes.
//
// The default build (no tags) is lean: the file stores (the embedded default), every
// API, the metrics and the dashboard. Engines come by build tag, one per family:
//
//	flurry_sql    SQLite, PostgreSQL, MySQL/MariaDB (lease/sqlstore, segment/sqlstore)
//	flurry_redis  Redis (lease/redisstore, segment/redisstore, redisgen)
//	flurry_etcd   etcd (lease/etcdstore, segment/etcdstore)
//	flurry_full   all of the above
//
// Only the packages that wire engines in (lease/leaseurl, segment/segmenturl, the
// server's strategies, cmd/flurry) look at the tags; the store packages have none.
// The facts here are constants set by tagged files, so nothing can change them.
package buildtags

import (
	"fmt"
	"strings"
)

// Whether each engine family is built in.
const (
	SQL   = sqlBuilt
	Redis = redisBuilt
	Etcd  = etcdBuilt
	// Full is true when the build has every family (the flurry_full tag, or all
	// three family tags).
	Full = SQL && Redis && Etcd
)

// A Family is a group of engines that one build tag adds.
type Family struct {
	Name    string   // "SQL", "Redis", "etcd"
	Tag     string   // the build tag that adds it, such as "flurry_sql"
	Built   bool     // whether this build has it
	Schemes []string // the store URL schemes it serves
}

// Families lists the engine families, built in or not.
func Families() []Family {
	return []Family{
		{Name: "SQL", Tag: "flurry_sql", Built: SQL, Schemes: []string{"sqlite", "postgres", "postgresql", "mysql"}},
		{Name: "Redis", Tag: "flurry_redis", Built: Redis, Schemes: []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel"}},
		{Name: "etcd", Tag: "flurry_etcd", Built: Etcd, Schemes: []string{"etcd"}},
	}
}

// ForScheme returns the family that serves a store URL scheme (any case); false for
// a scheme no family serves, such as file.
func ForScheme(scheme string) (Family, bool) {
	scheme = strings.ToLower(scheme)
	for _, f := range Families() {
		for _, s := range f.Schemes {
			if s == scheme {
				return f, true
			}
		}
	}
	return Family{}, false
}

// Tags returns the build tags of this build's engines, in the form go build's
// -tags flag takes ("flurry_full", or "flurry_sql,flurry_redis"); empty for the
// lean build. Tests use it to build the flurry binary as they were built.
func Tags() string {
	if Full {
		return "flurry_full"
	}
	var tags []string
	for _, f := range Families() {
		if f.Built {
			tags = append(tags, f.Tag)
		}
	}
	return strings.Join(tags, ",")
}

// Hint returns how to get a flurry with family f: "-tags flurry_sql (or
// flurry_full)".
func (f Family) Hint() string {
	return fmt.Sprintf("-tags %s (or flurry_full)", f.Tag)
}

// NotBuiltError is returned for a store URL whose engine family this build leaves
// out. Its message names the tag to build with.
type NotBuiltError struct {
	Scheme string
	Family Family
}

func (e *NotBuiltError) Error() string {
	return fmt.Sprintf("%s:// needs a flurry built with %s; this one has %s",
		e.Scheme, e.Family.Hint(), Describe())
}

// CheckScheme returns a *NotBuiltError when scheme belongs to an engine family this
// build leaves out, and nil otherwise (also for schemes no family serves).
func CheckScheme(scheme string) error {
	if f, ok := ForScheme(scheme); ok && !f.Built {
		return &NotBuiltError{Scheme: strings.ToLower(scheme), Family: f}
	}
	return nil
}

// Describe says in words which engines this build has, for messages and
// flurry version: "the file stores only (lean build)", or "the file stores, SQL,
// Redis, etcd (flurry_full)".
func Describe() string {
	if t := Tags(); t != "" {
		var names []string
		for _, f := range Families() {
			if f.Built {
				names = append(names, f.Name)
			}
		}
		return "the file stores, " + strings.Join(names, ", ") + " (" + t + ")"
	}
	return "the file stores only (the lean default build)"
}
