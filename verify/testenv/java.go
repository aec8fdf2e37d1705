package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// skipOrFail skips the test with msg, or fails it when FLURRY_TEST_REQUIRE=1.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
	}
	t.Skip(msg)
}

// Java returns the paths of javac and java, for the tests that check flurry
// against Java's own behaviour (its hash tables, FreeMarker), or skips naming what
// is missing (a JDK: Debian's openjdk-17-jdk-headless, which .ci/run installs).
func Java(t testing.TB) (javac, java string) {
	t.Helper()
	for _, name := range []string{"javac", "java"} {
		if _, err := exec.LookPath(name); err != nil {
			skipOrFail(t, name+" not installed (a JDK, Debian's openjdk-17-jdk-headless)")
		}
	}
	javac, _ = exec.LookPath("javac")
	java, _ = exec.LookPath("java")
	return javac, java
}

// FreeMarkerJar returns the FreeMarker jar (FLURRY_TEST_FREEMARKER, else Debian's
// libfreemarker-java at /usr/share/java/freemarker.jar), or skips naming it.
func FreeMarkerJar(t testing.TB) string {
	t.Helper()
	p := os.Getenv("FLURRY_TEST_FREEMARKER")
	if p == "" {
		p = "/usr/share/java/freemarker.jar"
	}
	if _, err := os.Stat(p); err != nil {
		skipOrFail(t, "FreeMarker not installed (Debian's libfreemarker-java, "+p+")")
	}
	return p
}

// CompileJava compiles the .java files with classpath cp (may be empty) into a
// directory of the test's and returns it, to put on the classpath of a java run.
func CompileJava(t testing.TB, cp string, files ...string) string {
	t.Helper()
	javac, _ := Java(t)
	dir := t.TempDir()
	args := []string{"-encoding", "UTF-8", "-nowarn", "-d", dir}
	if cp != "" {
		args = append(args, "-cp", cp)
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac %v: %v\n%s", files, err, out)
	}
	return dir
}

// CompatDir returns the directory of the originals flurry's compatibility tests
// run against (Leaf's templates, tinyid's sources): FLURRY_TEST_COMPAT, else the
// first shared/compat found beside the checkout or beside one of its parents (CI
// keeps shared/ beside the checkout). It skips naming what is missing when
// sub, a path inside it, is not there.
func CompatDir(t testing.TB, sub string) string {
	t.Helper()
	dir := os.Getenv("FLURRY_TEST_COMPAT")
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "shared", "compat", "README.md")); err == nil {
				dir = filepath.Join(d, "shared", "compat")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, sub)); dir == "" || err != nil {
		skipOrFail(t, "the originals for compatibility tests not found (shared/compat beside the checkout, or FLURRY_TEST_COMPAT): "+sub)
	}
	return dir
}
