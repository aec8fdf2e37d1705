package server_test

// The engines of this test's build tags (go test -tags flurry_full): the stores
// that leaseurl and segmenturl open, and the redis strategy. An external test
// package, like the programs that import them.
import _ "github.com/flurryid/flurry/verify/enginetags"
