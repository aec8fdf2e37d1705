package testenv

import (
	"testing"

	"github.com/flurryid/flurry/internal/buildtags"
)

// BuildFlurry returns the path of the flurry command built with the engine tags
// this test binary was built with (buildtags.Tags: go test -tags flurry_full gives
// a full flurry, a plain go test the lean default). See [Build] for how often it
// is built.
func BuildFlurry(t testing.TB) string {
	t.Helper()
	return Build(t, FlurryPkg, buildtags.Tags())
}

// NeedScheme skips the test when this test binary leaves out the engine family of
// a store URL scheme (see internal/buildtags), with a message naming the build tag
// that adds it; under FLURRY_TEST_REQUIRE=1 it fails instead. Tests that reach an
// engine through leaseurl, segmenturl, the server or the flurry binary call it;
// tests of a store package itself need no tag.
func NeedScheme(t testing.TB, scheme string) {
	t.Helper()
	if err := buildtags.CheckScheme(scheme); err != nil {
		needTag(t, err.Error())
	}
}

// NeedFull is NeedScheme for a test that needs every engine family.
func NeedFull(t testing.TB) {
	t.Helper()
	if !buildtags.Full() {
		needTag(t, "this test needs every engine: run it with go test -tags flurry_full; this test binary has "+buildtags.Describe())
	}
}

func needTag(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
	}
	t.Skip(msg)
}
