package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/buildtags"
)

// The flurry binary is built once per test binary: several tests of a package run
// it, and each build costs a minute or more of CPU on a cold cache.
var flurryBuild struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// BuildFlurry returns the path of the flurry command built with the engine tags
// this test binary was built with (buildtags.Tags: go test -tags flurry_full gives
// a full flurry, a plain go test the lean default). It is built once per test
// binary, in a directory that Main removes at the end. Under -short the test is
// skipped, since building takes minutes on a cold cache.
func BuildFlurry(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the flurry binary")
	}
	gobin, err := exec.LookPath("go") // go test puts its own GOROOT/bin first in PATH
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	b := &flurryBuild
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "flurry-testbin-")
		if b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "flurry")
		if runtime.GOOS == "windows" {
			b.bin += ".exe"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		b.out, b.err = exec.CommandContext(ctx, gobin, BuildArgs(b.bin, "github.com/flurryid/flurry/cmd/flurry")...).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build of flurry (-tags %q): %v\n%s", buildtags.Tags(), b.err, b.out)
	}
	return b.bin
}

// BuildArgs returns the arguments of go build for pkg into out, with the engine
// tags this test binary was built with.
func BuildArgs(out, pkg string) []string {
	args := []string{"build", "-o", out}
	if tags := buildtags.Tags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	return append(args, pkg)
}

// Main runs a package's tests and removes the binary BuildFlurry made. Packages
// that call BuildFlurry use it as their TestMain, or call it from theirs:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if d := flurryBuild.dir; d != "" {
		os.RemoveAll(d)
	}
	os.Exit(code)
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
	if !buildtags.Full {
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
