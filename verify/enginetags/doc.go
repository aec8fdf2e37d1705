// Package enginetags registers the engines of a test's build tags: a test that
// reaches an engine in its own process (leaseurl.Open, segmenturl.Open, the
// server's namespaces, a configuration check) imports it for its side effect,
//
//	import _ "github.com/flurryid/flurry/verify/enginetags"
//
// and go test -tags flurry_sql (flurry_redis, flurry_etcd, flurry_zk,
// flurry_full) then has those engines, as the flurry command built with the same
// tags does (cmd/flurry/engines_*.go), while a plain go test has the file stores
// only. Tests that run the flurry binary need no import: testenv.BuildFlurry
// builds it with the test's tags. Only tests import this package; programs import
// the engines' own packages.
//
// A test in a package that an engine package imports (lease/leaseurl, say) imports
// it from an external test package (package leaseurl_test) to avoid a cycle.
package enginetags
