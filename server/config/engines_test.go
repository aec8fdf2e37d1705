package config_test

// The engines of this test's build tags (go test -tags flurry_full), which the
// configuration's checks look up: a store URL or a redis namespace is accepted
// only when the program has its engine. An external test package, since the
// redis strategy's package imports this one.
import _ "github.com/flurryid/flurry/verify/enginetags"
