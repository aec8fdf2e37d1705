// Package buildtags reads the engine build tags (flurry_sql, flurry_redis,
// flurry_etcd, flurry_zk, flurry_full) this binary was built with from its build
// information, for flurry's tests: go test -tags flurry_full builds the flurry
// command the same way (testenv.BuildFlurry) and runs the tests that need an
// engine, a plain go test skips them with the tag to use.
//
// Programs do not ask this: which engines a program has is what registered itself
// (package internal/engines), whatever the tags. A test that reaches an engine in
// its own process, rather than through the flurry binary, imports the engines of
// its tags (verify/enginetags) so that the two agree.
package buildtags

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/flurryid/flurry/internal/engines"
)

// given returns the -tags of this binary's build, read once.
var given = sync.OnceValue(func() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" {
			return strings.FieldsFunc(s.Value, func(r rune) bool { return r == ',' || r == ' ' })
		}
	}
	return nil
})

// Built reports whether this binary was built with the tag of engine family f
// (or flurry_full).
func Built(f engines.Family) bool {
	t := given()
	return slices.Contains(t, "flurry_full") || slices.Contains(t, f.Tag)
}

// Full reports whether this binary was built with every engine family's tag
// (flurry_full, or all three family tags).
func Full() bool {
	for _, f := range engines.Families() {
		if !Built(f) {
			return false
		}
	}
	return true
}

// Tags returns the engine tags of this binary's build in the form go build's
// -tags flag takes ("flurry_full", or "flurry_sql,flurry_redis"); empty for a
// build without any.
func Tags() string {
	if Full() {
		return "flurry_full"
	}
	var tags []string
	for _, f := range engines.Families() {
		if Built(f) {
			tags = append(tags, f.Tag)
		}
	}
	return strings.Join(tags, ",")
}

// Describe says in words which engine tags this binary was built with.
func Describe() string {
	if t := Tags(); t != "" {
		return "-tags " + t
	}
	return "no engine tags (the lean default build)"
}

// CheckScheme returns an error naming the build tag when scheme's engine family
// is not among this binary's tags, and nil otherwise (also for schemes no family
// serves, such as file).
func CheckScheme(scheme string) error {
	if f, ok := engines.ForName(engines.LeaseStore, scheme); ok && !Built(f) {
		return fmt.Errorf("%s:// needs a flurry built with %s; this test binary has %s", strings.ToLower(scheme), f.Hint(), Describe())
	}
	return nil
}
