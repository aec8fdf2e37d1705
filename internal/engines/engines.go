// Package engines knows flurry's store engines and keeps the registry through
// which the packages that hold them plug in, as database/sql drivers do.
//
// The file stores are part of every program. Every other engine is a family of
// packages, each of which registers itself from its init function when a program
// imports it:
//
//	family  schemes                                      packages
//	SQL     sqlite, postgres, postgresql, mysql          lease/sqlstore, segment/sqlstore
//	Redis   redis, rediss, redis+sentinel, rediss+sentinel   lease/redisstore, segment/redisstore,
//	                                                     server/redisstrategy (the redis strategy)
//	etcd    etcd                                         lease/etcdstore, segment/etcdstore
//	ZooKeeper zk                                         lease/zkstore
//	          leafzk (Leaf's worker registry)            lease/leafzk
//
// The flurry command imports them by build tag (flurry_sql, flurry_redis,
// flurry_etcd, flurry_zk, or flurry_full for all: cmd/flurry/engines_*.go), so that the
// default build links no database driver; a Go program imports the packages it
// wants, e.g. import _ "github.com/flurryid/flurry/lease/sqlstore". The public
// front doors are lease/leaseurl.Register, segment/segmenturl.Register and, for
// the server's strategies, server/redisstrategy's init; this package is what they
// share, so that configuration checks, error messages and flurry version can ask
// what the program has without importing them all.
//
// The registry is package-level state, kept as small as it can be: it is written
// only by init functions (Register panics on a name registered twice, as
// sql.Register does) and read afterwards, under a lock, so it is safe for
// concurrent use. Ask it once the program runs, not from a package-level
// variable's initializer: a package's variables are set before the init functions
// of the packages that import it, which is where engines register.
package engines

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// Module is flurry's module path.
const Module = "github.com/flurryid/flurry"

// A Kind is a kind of plug-in: the registry keeps one name space per kind.
type Kind int

// The kinds of plug-in.
const (
	// LeaseStore is a lease store, named by its URL scheme (lease/leaseurl).
	LeaseStore Kind = iota
	// SegmentStore is a segment store, named by its URL scheme (segment/segmenturl).
	SegmentStore
	// Strategy is a namespace strategy of the server, named as a namespace's
	// strategy: key names it (server/redisstrategy).
	Strategy
	numKinds
)

// String names the kind in messages: "lease store", "segment store", "strategy".
func (k Kind) String() string {
	switch k {
	case LeaseStore:
		return "lease store"
	case SegmentStore:
		return "segment store"
	case Strategy:
		return "strategy"
	}
	return fmt.Sprintf("engines.Kind(%d)", int(k))
}

// registrar names the function that registers plug-ins of the kind, for panics.
func (k Kind) registrar() string {
	switch k {
	case LeaseStore:
		return "leaseurl.Register"
	case SegmentStore:
		return "segmenturl.Register"
	case Strategy:
		return "strategy.Register"
	}
	return "engines.Register"
}

// A Family is a group of engines that one build tag of the flurry command adds.
type Family struct {
	Name       string   // "SQL", "Redis", "etcd", "ZooKeeper"
	Tag        string   // the build tag that adds it to the flurry command, such as "flurry_sql"
	Schemes    []string // the store URL schemes it serves
	Strategies []string // the server strategies it serves, such as "redis"
	// pkgs are the packages that register its plug-ins, by kind ("" for none).
	pkgs [numKinds]string
	// schemePkgs are the lease-store schemes registered by another package
	// than pkgs[LeaseStore], with that package.
	schemePkgs map[string]string
}

// Package returns the import path of the package that registers the family's
// plug-ins of kind k, or "" when the family has none of that kind.
func (f Family) Package(k Kind) string {
	if k < 0 || k >= numKinds {
		return ""
	}
	return f.pkgs[k]
}

// PackageFor returns the import path of the package that registers the plug-in
// of kind k named name, one of the family's.
func (f Family) PackageFor(k Kind, name string) string {
	if p, ok := f.schemePkgs[name]; ok && k == LeaseStore {
		return p
	}
	return f.Package(k)
}

// Hint returns how to get a flurry command with the family: "-tags flurry_sql
// (or flurry_full)".
func (f Family) Hint() string {
	return fmt.Sprintf("-tags %s (or flurry_full)", f.Tag)
}

// Families lists the engine families flurry knows, whether this program has them
// or not.
func Families() []Family {
	return []Family{
		{Name: "SQL", Tag: "flurry_sql", Schemes: []string{"sqlite", "postgres", "postgresql", "mysql"},
			pkgs: [numKinds]string{LeaseStore: Module + "/lease/sqlstore", SegmentStore: Module + "/segment/sqlstore"}},
		{Name: "Redis", Tag: "flurry_redis", Schemes: []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel"},
			Strategies: []string{"redis"},
			pkgs: [numKinds]string{LeaseStore: Module + "/lease/redisstore", SegmentStore: Module + "/segment/redisstore",
				Strategy: Module + "/server/redisstrategy"}},
		{Name: "etcd", Tag: "flurry_etcd", Schemes: []string{"etcd"},
			pkgs: [numKinds]string{LeaseStore: Module + "/lease/etcdstore", SegmentStore: Module + "/segment/etcdstore"}},
		// ZooKeeper keeps leases only: a segment store would take a write per
		// block, which ZooKeeper does no better than the stores above.
		// leafzk keeps the leases in Meituan Leaf's own worker registry.
		{Name: "ZooKeeper", Tag: "flurry_zk", Schemes: []string{"zk", "leafzk"},
			pkgs:       [numKinds]string{LeaseStore: Module + "/lease/zkstore"},
			schemePkgs: map[string]string{"leafzk": Module + "/lease/leafzk"}},
	}
}

// ForName returns the family that serves a plug-in of kind k by name (a URL
// scheme in any case, or a strategy); false for a name no family serves, such as
// the file scheme.
func ForName(k Kind, name string) (Family, bool) {
	name = strings.ToLower(name)
	for _, f := range Families() {
		names := f.Schemes
		if k == Strategy {
			names = f.Strategies
		}
		if f.Package(k) != "" && slices.Contains(names, name) {
			return f, true
		}
	}
	return Family{}, false
}

// A table holds registered plug-ins by kind and name. The program has one, the
// registry; tests make their own.
type table struct {
	mu sync.RWMutex
	m  [numKinds]map[string]any
}

// registry is the program's table of plug-ins.
var registry table

// Register makes v the plug-in of kind k named name (a URL scheme, stored in lower
// case, or a strategy's name). The front doors (leaseurl.Register and so on) call
// it with values of their own type, from the init functions of the packages that
// hold the engines. It panics if v is nil, if the name is empty or not a valid URL
// scheme, or if the name is registered twice for the kind.
func Register(k Kind, name string, v any) { registry.register(k, name, v) }

func (t *table) register(k Kind, name string, v any) {
	if k < 0 || k >= numKinds {
		panic(fmt.Sprintf("engines: Register of an unknown kind %d", int(k)))
	}
	if v == nil {
		panic(k.registrar() + ": nil for " + name)
	}
	if !validName(name) {
		panic(fmt.Sprintf("%s: %q is not a scheme name (a letter, then letters, digits, +, - or .)", k.registrar(), name))
	}
	name = strings.ToLower(name)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[k] == nil {
		t.m[k] = map[string]any{}
	}
	if _, dup := t.m[k][name]; dup {
		panic(k.registrar() + " called twice for " + name)
	}
	t.m[k][name] = v
}

// validName reports whether name is a URL scheme as RFC 3986 defines it, which
// strategy names are too.
func validName(name string) bool {
	for i, c := range name {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return name != ""
}

func (t *table) lookup(k Kind, name string) (any, bool) {
	if k < 0 || k >= numKinds {
		return nil, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	v, ok := t.m[k][strings.ToLower(name)]
	return v, ok
}

// Lookup returns the plug-in of kind k registered under name (any case), as the
// type its front door registers; false when none is.
func Lookup[T any](k Kind, name string) (T, bool) {
	v, ok := registry.lookup(k, name)
	t, ok2 := v.(T)
	return t, ok && ok2
}

// Has reports whether a plug-in of kind k is registered under name.
func Has(k Kind, name string) bool {
	_, ok := registry.lookup(k, name)
	return ok
}

// Names lists the names registered for kind k, sorted.
func Names(k Kind) []string { return registry.names(k) }

func (t *table) names(k Kind) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, 0, len(t.m[k]))
	for name := range t.m[k] {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Present lists the families of which this program has at least one plug-in.
func Present() []Family { return registry.present() }

func (t *table) present() []Family {
	var out []Family
	for _, f := range Families() {
		if t.has(f) {
			out = append(out, f)
		}
	}
	return out
}

func (t *table) has(f Family) bool {
	for _, s := range f.Schemes {
		if _, ok := t.lookup(LeaseStore, s); ok {
			return true
		}
		if _, ok := t.lookup(SegmentStore, s); ok {
			return true
		}
	}
	for _, s := range f.Strategies {
		if _, ok := t.lookup(Strategy, s); ok {
			return true
		}
	}
	return false
}

// Tags returns the build tags of the flurry command that has the families this
// program has: "flurry_full" for all of them, "flurry_sql,flurry_redis" for some,
// "" for none (the lean default build). flurry version shows it.
func Tags() string { return tags(Present()) }

func tags(p []Family) string {
	if len(p) == len(Families()) {
		return "flurry_full"
	}
	out := make([]string, len(p))
	for i, f := range p {
		out[i] = f.Tag
	}
	return strings.Join(out, ",")
}

// Describe says in words which engines this program has, for messages: "the file
// stores only (the lean default build)", or "the file stores, SQL, Redis, etcd,
// ZooKeeper (flurry_full)".
func Describe() string { return describe(Present()) }

func describe(p []Family) string {
	if len(p) == 0 {
		return "the file stores only (the lean default build)"
	}
	names := make([]string, len(p))
	for i, f := range p {
		names[i] = f.Name
	}
	return "the file stores, " + strings.Join(names, ", ") + " (" + tags(p) + ")"
}

// Check returns a *NotBuiltError when name is a plug-in of kind k that a flurry
// engine family serves but that nothing in this program registered, and nil
// otherwise: when it is registered, and also for names no family serves (callers
// report those as unknown, with the names they know).
func Check(k Kind, name string) error {
	if Has(k, name) {
		return nil
	}
	if f, ok := ForName(k, name); ok {
		return &NotBuiltError{Kind: k, Name: strings.ToLower(name), Family: f}
	}
	return nil
}

// NotBuiltError is returned for a store URL scheme or a strategy that flurry knows
// but that no package of this program registered. Its message says what to do: in
// the flurry command (and flurry's own tests), the build tag to build with; in any
// other program, the package to import.
type NotBuiltError struct {
	Kind   Kind   // what was asked for
	Name   string // its scheme or strategy name, in lower case
	Family Family // the family that serves it
}

func (e *NotBuiltError) Error() string { return e.message(flurryBuild()) }

func (e *NotBuiltError) message(command bool) string {
	what := e.Name + "://"
	if e.Kind == Strategy {
		what = "the " + e.Name + " strategy"
	}
	if command {
		return fmt.Sprintf("%s needs a flurry built with %s; this one has %s", what, e.Family.Hint(), Describe())
	}
	missing := fmt.Sprintf("%s needs the %s %s, which this program does not import", what, e.Family.Name, e.Kind)
	if e.Kind == Strategy {
		missing = what + " is not in this program"
	}
	return fmt.Sprintf("%s: add import _ %q (the package registers itself, as database/sql drivers do)", missing, e.Family.PackageFor(e.Kind, e.Name))
}

// flurryBuild reports whether this program is the flurry command or one of
// flurry's own test and tool binaries, where engines come by build tag; anywhere
// else they come by import. Read once from the build information, which does not
// change while the program runs.
var flurryBuild = sync.OnceValue(func() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && (bi.Main.Path == Module || bi.Path == Module+"/cmd/flurry")
})
