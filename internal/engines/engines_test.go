package engines

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

// The program's registry is written once, while packages initialize: tests
// that register use a table of their own, so that they can run again (-count).

// registered is the program's registry as the tests below fill it, once.
var registered = sync.OnceFunc(func() {
	Register(LeaseStore, "Test-Lookup", "lease opener")
	Register(SegmentStore, "test-lookup", 42)
	Register(Strategy, "test-twice", 1)
})

func TestRegisterLookup(t *testing.T) {
	registered()
	if v, ok := Lookup[string](LeaseStore, "TEST-LOOKUP"); !ok || v != "lease opener" {
		t.Errorf("Lookup in another case = %q, %v", v, ok)
	}
	if _, ok := Lookup[string](SegmentStore, "test-lookup"); ok {
		t.Error("Lookup as another type than the one registered succeeded")
	}
	if v, ok := Lookup[int](SegmentStore, "test-lookup"); !ok || v != 42 {
		t.Errorf("Lookup of another kind's name = %v, %v", v, ok)
	}
	if Has(Strategy, "test-lookup") || Has(numKinds, "test-lookup") || Has(-1, "test-lookup") {
		t.Error("a name is registered for kinds it was not registered for")
	}
	if got := Names(LeaseStore); !slices.Contains(got, "test-lookup") || slices.Contains(got, "Test-Lookup") {
		t.Errorf("Names = %q, want the name in lower case", got)
	}
}

func TestRegisterPanics(t *testing.T) {
	registered()
	for _, tc := range []struct {
		name string
		kind Kind
		reg  string
		v    any
		want string
	}{
		{"twice", Strategy, "test-twice", 2, "strategy.Register called twice for test-twice"},
		{"twice in another case", Strategy, "TEST-TWICE", 2, "called twice for test-twice"},
		{"nil", LeaseStore, "test-nil", nil, "leaseurl.Register: nil for test-nil"},
		{"empty", SegmentStore, "", 1, `segmenturl.Register: "" is not a scheme name`},
		{"space", LeaseStore, "a b", 1, "is not a scheme name"},
		{"digit first", LeaseStore, "1x", 1, "is not a scheme name"},
		{"unknown kind", numKinds, "x", 1, "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r, _ := recover().(string)
				if !strings.Contains(r, tc.want) {
					t.Errorf("Register(%v, %q) panicked with %q; want %q", tc.kind, tc.reg, r, tc.want)
				}
			}()
			Register(tc.kind, tc.reg, tc.v)
		})
	}
	if v, _ := Lookup[int](Strategy, "test-twice"); v != 1 {
		t.Errorf("a refused second Register replaced the first: %v", v)
	}
	for _, ok := range []string{"redis+sentinel", "x-y.z", "a1"} {
		if !validName(ok) {
			t.Errorf("validName(%q) = false", ok)
		}
	}
}

// TestFamilies: the family table is consistent: every scheme and strategy belongs
// to one family, and each family names its packages: a lease store always, a
// segment store for all but ZooKeeper.
func TestFamilies(t *testing.T) {
	seen := map[string]string{}
	for _, f := range Families() {
		if f.Name == "" || !strings.HasPrefix(f.Tag, "flurry_") || len(f.Schemes) == 0 {
			t.Errorf("family %+v", f)
		}
		kinds := []Kind{LeaseStore, SegmentStore}
		if f.Name == "ZooKeeper" {
			kinds = kinds[:1]
			if _, ok := ForName(SegmentStore, "zk"); ok || f.Package(SegmentStore) != "" {
				t.Errorf("ZooKeeper serves segments")
			}
		}
		for _, k := range kinds {
			if !strings.HasPrefix(f.Package(k), Module+"/") {
				t.Errorf("family %s has no %s package: %q", f.Name, k, f.Package(k))
			}
		}
		for _, s := range f.Schemes {
			if other, dup := seen[s]; dup {
				t.Errorf("scheme %s is in %s and %s", s, other, f.Name)
			}
			seen[s] = f.Name
			for _, k := range kinds {
				if g, ok := ForName(k, strings.ToUpper(s)); !ok || g.Name != f.Name {
					t.Errorf("ForName(%v, %s) = %s, %v", k, s, g.Name, ok)
				}
			}
		}
		for _, s := range f.Strategies {
			if g, ok := ForName(Strategy, s); !ok || g.Name != f.Name || f.Package(Strategy) == "" {
				t.Errorf("ForName(Strategy, %s) = %s, %v; package %q", s, g.Name, ok, f.Package(Strategy))
			}
		}
	}
	if _, ok := ForName(LeaseStore, "file"); ok {
		t.Error("the file scheme belongs to a family")
	}
	if _, ok := ForName(Strategy, "etcd"); ok {
		t.Error("etcd, a scheme, is a strategy")
	}
	if (Family{}).Package(-1) != "" || (Family{}).Package(numKinds) != "" {
		t.Error("Package of an unknown kind")
	}
}

// TestCheckAndMessages: a name a family serves but nothing registered is a
// *NotBuiltError whose message says what to do: the build tag in the flurry
// command and flurry's own tests (this test binary), the package to import in
// any other program.
func TestCheckAndMessages(t *testing.T) {
	if !flurryBuild() {
		t.Fatal("flurry's own test binary is not taken for a flurry build")
	}
	if err := Check(LeaseStore, "no-such-scheme"); err != nil {
		t.Errorf("Check of a name no family serves: %v", err)
	}
	for _, tc := range []struct {
		kind             Kind
		name             string
		command, library string
	}{
		{LeaseStore, "Postgres", "postgres:// needs a flurry built with -tags flurry_sql (or flurry_full); this one has ",
			`postgres:// needs the SQL lease store, which this program does not import: add import _ "github.com/flurryid/flurry/lease/sqlstore"`},
		{SegmentStore, "rediss+sentinel", "rediss+sentinel:// needs a flurry built with -tags flurry_redis (or flurry_full)",
			`rediss+sentinel:// needs the Redis segment store, which this program does not import: add import _ "github.com/flurryid/flurry/segment/redisstore"`},
		{Strategy, "redis", "the redis strategy needs a flurry built with -tags flurry_redis (or flurry_full)",
			`the redis strategy is not in this program: add import _ "github.com/flurryid/flurry/server/redisstrategy" (the package registers itself`},
	} {
		err := Check(tc.kind, tc.name)
		nb, ok := err.(*NotBuiltError)
		if !ok {
			t.Errorf("Check(%v, %s) = %v", tc.kind, tc.name, err)
			continue
		}
		if got := err.Error(); !strings.HasPrefix(got, tc.command) {
			t.Errorf("in flurry: %q\nwant prefix %q", got, tc.command)
		}
		if got := nb.message(false); !strings.HasPrefix(got, tc.library) {
			t.Errorf("elsewhere: %q\nwant prefix %q", got, tc.library)
		}
	}
}

// TestDescribe: what the program has follows what registered, family by family.
func TestDescribe(t *testing.T) {
	var r table
	if p := r.present(); len(p) != 0 || tags(p) != "" || describe(p) != "the file stores only (the lean default build)" {
		t.Fatalf("before any engine: %v %q %q", p, tags(p), describe(p))
	}
	r.register(SegmentStore, "etcd", 1)
	if p := r.present(); tags(p) != "flurry_etcd" || describe(p) != "the file stores, etcd (flurry_etcd)" {
		t.Errorf("with etcd: %q %q", tags(p), describe(p))
	}
	r.register(Strategy, "redis", 1)
	r.register(LeaseStore, "mysql", 1)
	if p := r.present(); tags(p) != "flurry_sql,flurry_redis,flurry_etcd" || describe(p) != "the file stores, SQL, Redis, etcd (flurry_sql,flurry_redis,flurry_etcd)" {
		t.Errorf("with three: %q %q", tags(p), describe(p))
	}
	r.register(LeaseStore, "zk", 1)
	if p := r.present(); tags(p) != "flurry_full" || describe(p) != "the file stores, SQL, Redis, etcd, ZooKeeper (flurry_full)" {
		t.Errorf("with all four: %q %q", tags(p), describe(p))
	}
	r.register(LeaseStore, "etcd", 1) // the same name, another kind
	if _, ok := r.lookup(LeaseStore, "ETCD"); !ok || len(r.names(LeaseStore)) != 3 {
		t.Errorf("lease stores: %q", r.names(LeaseStore))
	}
	// The program's registry has none of flurry's engines in this test binary.
	if len(Present()) != 0 || Tags() != "" {
		t.Errorf("this test binary has %v", Present())
	}
}
