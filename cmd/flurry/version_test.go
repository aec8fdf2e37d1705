package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	r := cli(t, "", "version")
	if r.code != 0 || r.stderr != "" || len(lines(r.stdout)) != 1 {
		t.Fatalf("version: %+v", r)
	}
	if !strings.HasPrefix(r.stdout, "flurry ") || !strings.Contains(r.stdout, runtime.Version()) {
		t.Errorf("version %q lacks the flurry version or %s", r.stdout, runtime.Version())
	}
	// A test binary has no main module version.
	if !strings.Contains(r.stdout, "(devel)") {
		t.Errorf("version %q: want the (devel) fallback in a test", r.stdout)
	}
	if r2 := cli(t, "", "--version"); r2.stdout != r.stdout {
		t.Errorf("--version %q differs from version %q", r2.stdout, r.stdout)
	}
}

// TestVersionStamped: the version and commit scripts/release.sh links in win over
// the build info; the release test (scripts) checks the real -ldflags path.
func TestVersionStamped(t *testing.T) {
	got := versionString("v1.2.3", "abcdef123456")
	want := "flurry v1.2.3 rev abcdef123456 " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + " (" + builtIn() + ")"
	if got != want {
		t.Errorf("versionString = %q, want %q", got, want)
	}
	if got := versionString("", ""); !strings.Contains(got, "(devel)") {
		t.Errorf("unstamped versionString = %q, want the (devel) fallback", got)
	}
}
