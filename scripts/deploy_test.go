// Package scripts_test checks the release script and the deployment files under
// deploy/: the release build of one target, the static binary serving under a
// read-only root as an unprivileged user (what the container image does), the
// Prometheus rules with promtool, the Grafana dashboard's queries against the
// metrics a real server exports, and the systemd unit with systemd-analyze. The
// Kubernetes manifests are checked in the deploy module (deploy/kubernetes).
package scripts_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
	_ "github.com/flurryid/flurry/verify/enginetags" // the engines of the test's tags
	"gopkg.in/yaml.v3"
)

// requireTool returns the path of a command the test needs, or skips naming it
// (fails under FLURRY_TEST_REQUIRE=1, as CI runs).
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not installed (Debian package %s): %v", name, pkg, err)
		if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// release is one run of scripts/release.sh for this machine's platform, shared by
// the tests that need the static binary (the build is the slow part).
var release struct {
	once            sync.Once
	dir, bin, log   string
	version, commit string
	err             error
}

const (
	testVersion = "v0.0.0-releasetest"
	testCommit  = "0123456789ab"
)

func releaseBinary(t *testing.T) (dir, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs a release build, minutes of CPU; run: go test -tags flurry_full ./scripts/")
	}
	target := runtime.GOOS + "/" + runtime.GOARCH
	switch target {
	case "linux/amd64", "linux/arm64":
	default:
		t.Skipf("the release test runs on linux/amd64 or linux/arm64, not %s", target)
	}
	requireTool(t, "bash", "bash")
	release.once.Do(func() {
		dir, err := os.MkdirTemp("", "flurry-release-test-")
		if err != nil {
			release.err = err
			return
		}
		release.dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "scripts", "release.sh"),
			"--target", target, "--version", testVersion, "--commit", testCommit, "--out", dir)
		out, err := cmd.CombinedOutput()
		release.log = string(out)
		if err != nil {
			release.err = fmt.Errorf("scripts/release.sh: %v\n%s", err, out)
		}
		release.bin = filepath.Join(dir, "flurry-"+testVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	})
	if release.err != nil {
		t.Fatal(release.err)
	}
	return release.dir, release.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if release.dir != "" {
		os.RemoveAll(release.dir)
	}
	os.Exit(code)
}

// TestRelease builds this platform's target with the release script and checks
// what it wrote: a static, stripped binary whose `flurry version` shows the stamped
// version and commit, SHA256SUMS that match the files, and a CycloneDX SBOM listing
// exactly the modules linked into the binary. The full cross-build is
// `scripts/release.sh` with no --target (docs/operations.md).
func TestRelease(t *testing.T) {
	dir, bin := releaseBinary(t)
	name := filepath.Base(bin)

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", name, err, out)
	}
	want := fmt.Sprintf("flurry %s rev %s %s %s/%s (flurry_full)\n", testVersion, testCommit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("version printed %q, want %q", out, want)
	}

	// Static: no ELF interpreter, no dynamic section.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: not a static binary", name, p.Type)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a symbol table: not stripped (-s -w)", name)
	}
	f.Close()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	if settings["-tags"] != "flurry_full" {
		t.Errorf("build setting -tags=%q, want flurry_full: a release has every store engine", settings["-tags"])
	}

	// SHA256SUMS: every file of the release, each sum right.
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not sha256sum's format", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("SHA256SUMS lists %s: %v", file, err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s has the wrong sum", file)
		}
		listed[file] = true
	}
	for _, f := range []string{name, name + ".cdx.json"} {
		if !listed[f] {
			t.Errorf("SHA256SUMS does not list %s:\n%s", f, sums)
		}
	}

	// The SBOM, decoded strictly into the shape it must have.
	var bom struct {
		BOMFormat    string `json:"bomFormat"`
		SpecVersion  string `json:"specVersion"`
		SerialNumber string `json:"serialNumber"`
		Version      int    `json:"version"`
		Metadata     struct {
			Timestamp string `json:"timestamp"`
			Tools     struct {
				Components []struct{ Type, Name string } `json:"components"`
			} `json:"tools"`
			Component sbomComponent `json:"component"`
		} `json:"metadata"`
		Components   []sbomComponent `json:"components"`
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&bom); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != "1.5" || bom.Version != 1 ||
		!regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(bom.SerialNumber) {
		t.Errorf("SBOM header: %s %s v%d %s", bom.BOMFormat, bom.SpecVersion, bom.Version, bom.SerialNumber)
	}
	if _, err := time.Parse(time.RFC3339, bom.Metadata.Timestamp); err != nil {
		t.Errorf("SBOM timestamp: %v", err)
	}
	mc := bom.Metadata.Component
	binSum := sha256.Sum256(mustRead(t, bin))
	if mc.Type != "application" || mc.Name != "github.com/flurryid/flurry" || mc.Version != testVersion ||
		mc.PURL != "pkg:golang/github.com/flurryid/flurry@"+testVersion ||
		len(mc.Hashes) != 1 || mc.Hashes[0].Alg != "SHA-256" || mc.Hashes[0].Content != hex.EncodeToString(binSum[:]) {
		t.Errorf("SBOM component: %+v", mc)
	}
	// The modules: exactly those the linker recorded in the binary.
	var want2, got []string
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		want2 = append(want2, m.Path+"@"+m.Version)
	}
	refs := map[string]bool{}
	for _, c := range bom.Components {
		if c.Type != "library" || c.PURL != "pkg:golang/"+c.Name+"@"+c.Version || c.BOMRef != c.PURL {
			t.Errorf("SBOM component %+v", c)
		}
		got = append(got, c.Name+"@"+c.Version)
		refs[c.BOMRef] = true
	}
	sort.Strings(want2)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want2, "\n") {
		t.Errorf("SBOM modules differ from the binary's:\nSBOM:\n%s\nbinary:\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}
	for _, must := range []string{"github.com/spf13/cobra", "modernc.org/sqlite", "github.com/prometheus/client_golang"} {
		if !strings.Contains(strings.Join(got, "\n"), must+"@v") {
			t.Errorf("SBOM lacks %s", must)
		}
	}
	if len(bom.Dependencies) != 1 || bom.Dependencies[0].Ref != mc.BOMRef || len(bom.Dependencies[0].DependsOn) != len(bom.Components) {
		t.Errorf("SBOM dependencies: %+v", bom.Dependencies)
	}
	for _, d := range bom.Dependencies[0].DependsOn {
		if !refs[d] {
			t.Errorf("SBOM dependency %s names no component", d)
		}
	}
	t.Logf("%d modules in the SBOM; %s", len(bom.Components), strings.TrimSpace(release.log))
}

type sbomComponent struct {
	Type    string `json:"type"`
	BOMRef  string `json:"bom-ref"`
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
	Hashes  []struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	} `json:"hashes"`
	Properties []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"properties"`
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exportedMetrics runs the embedded default server in process, asks it for an ID
// and for a bad count (so the error counter has a series), and returns the metric
// names /metrics lists: the names the dashboard and the alert rules may use.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	if err := cfg.Check(os.LookupEnv); err != nil {
		t.Fatal(err)
	}
	return scrapeMetrics(t, cfg, "/v1/default/next", "/v1/segment/next", "/v1/default/next?count=0")
}

// regionMetrics are the metric names a server of a region (a region: block, its
// claim in a file registry) exports: the region's families are there only then.
func regionMetrics(t *testing.T) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf("data_dir: %s\nregion: {name: eu-west, value: 1, registry: 'file://%s'}\n"+
		"namespaces:\n  orders:\n    strategy: snowflake\n    snowflake: {layout: twitter}\n", filepath.Join(dir, "data"), filepath.Join(dir, "registry"))
	cfg, err := config.Parse("region.yaml", []byte(yaml), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return scrapeMetrics(t, cfg, "/v1/orders/next")
}

// scrapeMetrics starts a server with cfg, asks it paths, and returns the metric
// names its /metrics then has.
func scrapeMetrics(t *testing.T, cfg *config.Config, paths ...string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := server.New(ctx, server.Options{Config: cfg, OpenSegmentStore: segmenturl.Open,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()
	base := "http://" + ln.Addr().String()
	c := &http.Client{Timeout: 30 * time.Second}
	for _, u := range paths {
		res, err := c.Get(base + u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	res, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		names[name] = true
	}
	return names
}

// metricRef finds metric names in PromQL: every selector in these files is written
// name{...}, so a name is what stands before a '{'.
var metricRef = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

// labelValuesRef is Grafana's variable query label_values(name, label).
var labelValuesRef = regexp.MustCompile(`label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,`)

func metricsIn(expr string) []string {
	var out []string
	for _, m := range append(metricRef.FindAllStringSubmatch(expr, -1), labelValuesRef.FindAllStringSubmatch(expr, -1)...) {
		out = append(out, m[1])
	}
	return out
}

// TestGrafanaDashboard: the dashboard is JSON Grafana can import, every query
// names a metric the server really exports (a renamed metric breaks this test,
// not a panel in production), and every flurry_ metric is on some panel.
func TestGrafanaDashboard(t *testing.T) {
	exported := exportedMetrics(t)
	raw := mustRead(t, filepath.Join(repoRoot(t), "deploy", "grafana", "flurry-dashboard.json"))
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int                      `json:"id"`
			Type    string                   `json:"type"`
			Title   string                   `json:"title"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("flurry-dashboard.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	used := map[string]bool{}
	check := func(where, expr string) {
		names := metricsIn(expr)
		if len(names) == 0 {
			t.Errorf("%s: query %q names no metric", where, expr)
		}
		for _, n := range names {
			base := n
			if !exported[n] {
				t.Errorf("%s: query names %s, which flurry serve does not export", where, n)
			}
			for _, suf := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suf)
			}
			used[base] = true
		}
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q has no query or no size", p.Title)
		}
		for _, tg := range p.Targets {
			check(fmt.Sprintf("panel %q %s", p.Title, tg.RefID), tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			check("variable "+v.Name, v.Definition)
		}
	}
	for n := range exported {
		n = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
		if strings.HasPrefix(n, "flurry_") && !used[n] {
			t.Errorf("flurry serve exports %s and no panel shows it", n)
		}
	}
}

// TestAlertRules runs promtool on the alerting rules: `check rules` (syntax, PromQL,
// templates) and `test rules` (each alert fires on the series that should fire it,
// at the right time, with the right text, and not before), and checks that each
// rule names metrics the server exports.
func TestAlertRules(t *testing.T) {
	promtool := requireTool(t, "promtool", "prometheus")
	dir := filepath.Join(repoRoot(t), "deploy", "prometheus")
	for _, args := range [][]string{{"check", "rules", "flurry-rules.yml"}, {"test", "rules", "flurry-rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	exported := exportedMetrics(t)
	for n := range regionMetrics(t) {
		exported[n] = true
	}
	raw := string(mustRead(t, filepath.Join(dir, "flurry-rules.yml")))
	alerts := 0
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "- alert:") {
			alerts++
		}
		expr, ok := strings.CutPrefix(line, "expr:")
		if !ok {
			continue
		}
		names := metricRef.FindAllStringSubmatch(expr, -1)
		// Rules compare bare names (flurry_lease_held == 0): take every flurry_ word.
		for _, n := range regexp.MustCompile(`\bflurry_[a-z_]+`).FindAllString(expr, -1) {
			names = append(names, []string{n, n})
		}
		if len(names) == 0 {
			t.Errorf("rule expression %q names no metric", expr)
		}
		for _, n := range names {
			if !exported[n[1]] {
				t.Errorf("rule expression %q names %s, which flurry serve does not export", expr, n[1])
			}
		}
	}
	for _, want := range []string{"FlurryLeaseLost", "FlurryClockBehind", "FlurrySegmentRunwayLow", "FlurryLayoutLifeBelowYear", "FlurrySegmentFetchFailing",
		"FlurryRegionClaimConflict", "FlurryRegionClaimUnverified"} {
		if !strings.Contains(raw, "- alert: "+want+"\n") {
			t.Errorf("no alert %s", want)
		}
	}
	t.Logf("%d alerts", alerts)
}

// TestSystemdUnit checks deploy/systemd/flurry.service with systemd-analyze:
// `verify` must print nothing (any unknown key or bad value is a warning there, so
// output fails the test, as does the exit status), and the offline security score
// must stay at 2.0 or below ("OK"). ExecStart is pointed at this test's own binary
// for verify, which checks that the command exists; the unit is not started (no
// systemd runs as PID 1 on a CI machine). TestServeNotifiesSystemd in cmd/flurry
// checks the Type=notify protocol with a real flurry serve.
func TestSystemdUnit(t *testing.T) {
	sa := requireTool(t, "systemd-analyze", "systemd")
	unit := string(mustRead(t, filepath.Join(repoRoot(t), "deploy", "systemd", "flurry.service")))
	for _, want := range []string{"Type=notify", "DynamicUser=yes", "StateDirectory=flurry", "ProtectSystem=strict", "NoNewPrivileges=yes"} {
		if !strings.Contains(unit, "\n"+want+"\n") {
			t.Errorf("unit lacks %s", want)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "flurry.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/flurry", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	cmd := exec.Command(sa, "security", "--offline=true", "--threshold=20", "--no-pager", "flurry.service")
	cmd.Dir = dir
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 (%v)\n%s", err, out)
	}
	if i := strings.Index(string(out), "Overall exposure level"); i >= 0 {
		t.Log(strings.TrimSpace(string(out[i:])))
	}
}

// TestContainerReadOnly runs the release binary as the container image does
// (deploy/container/Dockerfile): alone in a root directory built by the test, like
// scratch, that is mounted read-only, as user 65532, with only /var/lib/flurry
// writable (the image's volume). It must start on the embedded default, answer
// /readyz and an ID request, report ready through `flurry health` (the image's
// HEALTHCHECK), and stop cleanly on SIGTERM. Needs root for the mount namespace
// and chroot. deploy/container/image_test.go builds the image itself and runs it
// with podman.
func TestContainerReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		msg := "not root (unshare --mount and chroot need it)"
		if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
			t.Fatal(msg + "; FLURRY_TEST_REQUIRE=1 makes this a failure")
		}
		t.Skip(msg)
	}
	unshare := requireTool(t, "unshare", "util-linux")
	_, bin := releaseBinary(t)

	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil { // t.TempDir is 0700: the user must reach /flurry
		t.Fatal(err)
	}
	for _, d := range []string{"var/lib/flurry", "proc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "flurry"), mustRead(t, bin), 0o755); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir() // the volume
	if err := os.Chown(data, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	// A private mount namespace: bind the root read-only, the volume read-write on
	// it, a /proc for the process metrics, then chroot as the unprivileged user.
	script := fmt.Sprintf(`set -e
mount --bind %[1]q %[1]q
mount --bind %[2]q %[1]q/var/lib/flurry
mount -o remount,bind,ro %[1]q
mount -t proc proc %[1]q/proc
exec chroot --userspec=65532:65532 %[1]q /flurry serve --data /var/lib/flurry --listen 127.0.0.1:%[3]d`, root, data, port)
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", script)
	var log strings.Builder
	var mu sync.Mutex
	cmd.Stdout = &lockedWriter{w: &log, mu: &mu}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
		done <- nil
	}()
	logText := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := c.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("flurry serve ended: %v\n%s", err, logText())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after a minute: %v\n%s", err, logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, ns := range []string{"default", "segment"} {
		res, err := c.Get(base + "/v1/" + ns + "/next?count=3")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ids":[`) {
			t.Errorf("%s: %s %s", ns, res.Status, body)
		}
	}
	// The image's health check, run as the image runs it.
	hc := exec.Command(bin, "health", "--url", base+"/readyz")
	if out, err := hc.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ready" {
		t.Errorf("flurry health: %v %q", err, out)
	}
	// Whatever it wrote is in the volume, owned by the user.
	var files []string
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != data {
			files = append(files, strings.TrimPrefix(p, data+"/"))
		}
		return nil
	})
	if len(files) == 0 {
		t.Errorf("nothing written in the volume")
	}
	// SIGTERM goes to sh's exec'd chroot, which exec'd flurry: one process.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("flurry serve exited with %v\n%s", err, logText())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no graceful stop within a minute\n%s", logText())
	}
	if l := logText(); !strings.Contains(l, "flurry: stopped") || strings.Contains(l, "read-only") {
		t.Errorf("log:\n%s", l)
	}
	t.Logf("volume: %s", strings.Join(files, " "))
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestKubernetesConfig checks the flurry.yaml inside deploy/kubernetes/configmap.yaml
// with flurry's own configuration parser (unknown keys, bad values, token_env), with
// the token the Secret provides in the environment. The manifests' Kubernetes shape
// is checked in the deploy module.
func TestKubernetesConfig(t *testing.T) {
	if !engines.Has(engines.LeaseStore, "etcd") {
		t.Skip("the ConfigMap leases from etcd: needs a build with -tags flurry_etcd or flurry_full (the README's test command)")
	}
	raw := mustRead(t, filepath.Join(repoRoot(t), "deploy", "kubernetes", "configmap.yaml"))
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	text, ok := cm.Data["flurry.yaml"]
	if !ok {
		t.Fatal("configmap.yaml has no flurry.yaml")
	}
	env := func(k string) (string, bool) {
		switch k {
		case "FLURRY_DEFAULT_TOKEN":
			return "a-token-from-the-secret-0123456789", true
		case "FLURRY_ADMIN_TOKEN":
			return "an-admin-token-from-the-secret-0123", true
		}
		return "", false
	}
	cfg, err := config.Parse("configmap.yaml:flurry.yaml", []byte(text), env)
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if err := cfg.Check(env); err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if cfg.DataDir != "/var/lib/flurry" || cfg.Listen != ":8080" {
		t.Errorf("data_dir %q listen %q: want /var/lib/flurry and :8080 (the image's volume and port)", cfg.DataDir, cfg.Listen)
	}
	// No namespace may lease from the pod's own disk: every pod would take worker 0.
	if strings.Contains(text, "file://") || !strings.Contains(text, "store: etcd://") {
		t.Errorf("the ConfigMap's lease store must be shared by the pods (etcd), not a file store:\n%s", text)
	}
}
