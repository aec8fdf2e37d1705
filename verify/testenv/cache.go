package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/lockedfile"
)

// modulePath is this repository's module: the packages whose files Build hashes.
const modulePath = "github.com/flurryid/flurry"

// FlurryPkg is the import path of the flurry command.
const FlurryPkg = modulePath + "/cmd/flurry"

// builds holds this test process's binaries, one per configuration (package and
// tags), so that tests after the first get the path at once.
var builds struct {
	mu sync.Mutex
	m  map[string]*build
}

type build struct {
	once sync.Once
	bin  string
	err  error
}

// Build returns the path of a binary of the main package pkg built with tags
// (empty: none), built once per configuration and shared: by the tests of one
// process through a map, and by the test processes of one go test run (and later
// runs) through a cache directory, flurry-test under [os.UserCacheDir], where a
// binary's name is a hash of everything that goes into it: the Go version, the
// platform, the build environment, the tags, and the content of every file of the
// module the package's build reads (go list -deps). A change to any of them
// builds a new one. Concurrent test processes wait for the one that builds
// (a file lock) rather than build the same binary again; the binary is written to
// a temporary name and renamed into place, so that no one runs half a file.
// Binaries not used for a day are removed, the newest few excepted.
func Build(t testing.TB, pkg, tags string) string {
	t.Helper()
	key := pkg + " " + tags
	builds.mu.Lock()
	if builds.m == nil {
		builds.m = map[string]*build{}
	}
	b := builds.m[key]
	if b == nil {
		b = &build{}
		builds.m[key] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		b.bin, b.err = cachedBuild(ctx, pkg, tags)
	})
	if errors.Is(b.err, errNoGo) {
		t.Skip(b.err.Error())
	}
	if b.err != nil {
		t.Fatalf("%v", b.err)
	}
	return b.bin
}

// errNoGo is why a test that needs a build skips on a machine without the go
// command (tests of a copied test binary).
var errNoGo = errors.New("go command not found")

// goCmd returns the go command: go test puts its own GOROOT/bin first in PATH.
func goCmd() (string, error) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNoGo, err)
	}
	return p, nil
}

// buildEnv lists the environment variables that change what go build makes.
var buildEnv = []string{"GOFLAGS", "CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_LDFLAGS", "GOEXPERIMENT",
	"GOAMD64", "GOARM64", "GOARM", "GO386", "GOOS", "GOARCH", "GOTOOLCHAIN", "GODEBUG"}

// BuildEnvVar names settings of the build environment for the binaries that
// Build makes, as KEY=VALUE words over this process's own (each KEY one of
// buildEnv's), e.g. FLURRY_TEST_BUILD_ENV=CGO_ENABLED=0. A -race run needs cgo
// for its own build; with this, the binaries its tests start can still be built
// the way a run's other steps build (CI builds everything else as the release
// does, CGO_ENABLED=0 with -trimpath), from the same compiled packages, rather
// than compile every package once more in a configuration of their own.
const BuildEnvVar = "FLURRY_TEST_BUILD_ENV"

// childEnv returns the environment of Build's go commands: this process's, with
// BuildEnvVar's settings after it (the last of a key wins).
func childEnv() ([]string, error) {
	env := os.Environ()
	for _, w := range strings.Fields(os.Getenv(BuildEnvVar)) {
		k, _, ok := strings.Cut(w, "=")
		if !ok || !slices.Contains(buildEnv, k) {
			return nil, fmt.Errorf("testenv: %s: %q is not KEY=VALUE of a build setting (one of %s)", BuildEnvVar, w, strings.Join(buildEnv, ", "))
		}
		env = append(env, w)
	}
	return env, nil
}

// lookupEnv returns key's value in env, the last one where it appears more than
// once (as os/exec passes it on).
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// cacheRetain is how long a cached binary nobody used is kept, and cacheKeep how
// many of the most recently used are kept regardless.
const (
	cacheRetain = 24 * time.Hour
	cacheKeep   = 4
)

// cachedBuild returns the cached binary of pkg with tags, building it first if
// the cache lacks it.
func cachedBuild(ctx context.Context, pkg, tags string) (string, error) {
	gobin, err := goCmd()
	if err != nil {
		return "", err
	}
	env, err := childEnv()
	if err != nil {
		return "", err
	}
	sum, err := inputHash(ctx, gobin, env, pkg, tags)
	if err != nil {
		return "", err
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	name := filepath.Base(pkg) + "-" + sum[:24]
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(dir, name)
	if touch(bin) {
		return bin, nil
	}
	// One builder at a time: the others wait, then find the binary.
	// Where flock is missing (Windows), each process builds its own, and the
	// rename keeps that safe.
	if lockedfile.Supported() == nil {
		unlock, err := lockedfile.Lock(ctx, filepath.Join(dir, "build.lock"))
		if err != nil {
			return "", fmt.Errorf("testenv: %w", err)
		}
		defer unlock()
	}
	if touch(bin) {
		return bin, nil
	}
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := []string{"build", "-o", tmp.Name()}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, pkg)
	start := time.Now()
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	if os.Getenv("FLURRY_TEST_BUILDLOG") != "" {
		logBuild(os.Getenv("FLURRY_TEST_BUILDLOG"), fmt.Sprintf("%s %s tags=%q %s %v\n", time.Now().Format(time.RFC3339), name, tags, pkg, time.Since(start).Round(time.Millisecond)))
	}
	prune(dir, bin)
	return bin, nil
}

// logBuild appends a line to the file FLURRY_TEST_BUILDLOG names, for counting
// builds across the processes of a test run.
func logBuild(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(line)
}

// cacheDir returns the directory of the cached binaries, made if missing.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("flurry-test-cache-%d", os.Getuid()))
	}
	dir := filepath.Join(base, "flurry-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testenv: binary cache: %w", err)
	}
	return dir, nil
}

// touch reports whether bin exists, marking it used now.
func touch(bin string) bool {
	if _, err := os.Stat(bin); err != nil {
		return false
	}
	now := time.Now()
	os.Chtimes(bin, now, now)
	return true
}

// prune removes the binaries of dir not used for cacheRetain, but for the
// cacheKeep most recently used and keep.
func prune(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type old struct {
		path string
		used time.Time
	}
	var bins []old
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || e.Name() == "build.lock" {
			continue
		}
		bins = append(bins, old{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	slices.SortFunc(bins, func(a, b old) int { return b.used.Compare(a.used) })
	for i, b := range bins {
		if i >= cacheKeep && b.path != keep && time.Since(b.used) > cacheRetain {
			os.Remove(b.path)
		}
	}
}

// listed is what inputHash reads of go list -json.
type listed struct {
	ImportPath string
	Dir        string
	Module     *struct{ Path, GoMod string }
	Error      *struct{ Err string }

	GoFiles, CgoFiles, CFiles, CXXFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
}

// inputHash returns a hash of what go build of pkg with tags reads: the
// toolchain, the platform, the build environment, the tags, go.mod and go.sum,
// and every file of this module's packages in the build (Go, cgo, assembly and
// embedded files). Files of other modules are fixed by their versions in go.sum.
func inputHash(ctx context.Context, gobin string, env []string, pkg, tags string) (string, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Dir,Module,Error,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, pkg)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Env = env
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\npkg %s\ntags %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, pkg, tags)
	for _, v := range buildEnv {
		fmt.Fprintf(h, "%s=%s\n", v, lookupEnv(env, v))
	}
	var mainMod string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("go list -json: %w", err)
		}
		if p.Error != nil {
			return "", fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Module == nil || p.Module.Path != modulePath {
			continue // the standard library (fixed by the Go version) or another module
		}
		if mainMod == "" {
			mainMod = p.Module.GoMod
		}
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range list {
				if err := hashFile(h, filepath.Join(p.Dir, f), f); err != nil {
					return "", err
				}
			}
		}
	}
	if mainMod == "" {
		return "", fmt.Errorf("testenv: go list -deps %s found no package of this module", pkg)
	}
	for _, f := range []string{mainMod, filepath.Join(filepath.Dir(mainMod), "go.sum")} {
		if err := hashFile(h, f, filepath.Base(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(h, "file %s\n", name)
	_, err = io.Copy(h, f)
	return err
}
