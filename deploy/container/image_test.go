// Package container holds flurry's container image (Dockerfile, build.sh); this
// test builds the image with build.sh and runs it with podman.
package container

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/deploy/internal/deploytest"
)

// podman runs podman with the global options every call of one test shares.
type podman struct {
	bin    string
	global []string // before the subcommand
	run    []string // after `run`
}

func (p *podman) cmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, p.bin, append(append([]string{}, p.global...), args...)...)
}

// out runs podman and returns its standard output, failing the test on an error.
func (p *podman) out(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := p.cmd(ctx, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// logs returns what the container printed: podman logs replays the container's
// standard error (where flurry logs) on its own.
func (p *podman) logs(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := p.cmd(ctx, "logs", name).CombinedOutput()
	if err != nil {
		t.Fatalf("podman logs %s: %v\n%s", name, err, out)
	}
	return string(out)
}

// quiet runs podman for cleanup: errors are expected (already removed).
func (p *podman) quiet(args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p.cmd(ctx, args...).Run()
}

// setUp finds podman and the options this machine needs, or skips naming what is
// missing.
func setUp(t *testing.T) *podman {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the release binary and a container image, runs it; run: cd deploy && go test ./container")
	}
	deploytest.Root(t, "the image test runs rootful podman: port maps, volumes, healthcheck")
	p := &podman{bin: deploytest.Tool(t, "podman", "podman")}
	// No systemd as PID 1 on a CI machine: cgroupfs, and events in a file.
	p.global = []string{"--cgroup-manager=cgroupfs", "--events-backend=file"}
	// crun refuses the hybrid cgroup layout (v1 controllers, plus a v2 hierarchy
	// with controllers of its own) that some VMs have; runc runs there.
	if b, err := os.ReadFile("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil && len(bytes.TrimSpace(b)) > 0 {
		runc := deploytest.Tool(t, "runc", "runc")
		p.global = append(p.global, "--runtime", runc)
	}
	// podman's default limits (1M open files) need CAP_SYS_RESOURCE to raise the
	// hard limit; a sandbox may not grant it. Run with the limits the documented
	// command gives, so that the command runs as written.
	p.run = documentedLimits(t)
	return p
}

// documentedLimits returns the --ulimit flags of docs/operations.md's podman run
// command, failing the test when it has none or they exceed this process's own
// hard limits (the container could not start here).
func documentedLimits(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)podman run -d (.*?)"\$tag"`).FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/operations.md has no podman run -d ... "$tag" command`)
	}
	var args []string
	for _, l := range regexp.MustCompile(`--ulimit (nofile|nproc)=(\d+):(\d+)`).FindAllStringSubmatch(string(m[1]), -1) {
		res := map[string]int{"nofile": syscall.RLIMIT_NOFILE, "nproc": 6}[l[1]] // RLIMIT_NPROC
		var own syscall.Rlimit
		if err := syscall.Getrlimit(res, &own); err != nil {
			t.Fatal(err)
		}
		if hard, _ := strconv.ParseUint(l[3], 10, 64); hard > own.Max {
			t.Fatalf("docs/operations.md: --ulimit %s=%s:%s is above this machine's hard limit %d", l[1], l[2], l[3], own.Max)
		}
		args = append(args, "--ulimit", l[1]+"="+l[2]+":"+l[3])
	}
	if len(args) != 4 {
		t.Fatalf("docs/operations.md: podman run gives %q; want --ulimit for nofile and nproc (podman's defaults need CAP_SYS_RESOURCE)", args)
	}
	return args
}

// TestImage builds the image with deploy/container/build.sh (no base image is
// pulled: FROM scratch) and runs it with podman as a user would: read-only root,
// a named volume for the data, the port mapped to loopback. It checks that the
// server runs as user 65532, issues IDs over HTTP, that `podman healthcheck run`
// (the image's HEALTHCHECK: `flurry health`, no shell inside) reports healthy, that
// a new container on the same volume resumes from the node's journal and the
// segment store (IDs above the earlier ones), and that `podman stop` (SIGTERM)
// ends the server cleanly, exit status 0, before podman's kill. Containers, the
// volume and the image are removed at the end.
func TestImage(t *testing.T) {
	p := setUp(t)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	id := hex.EncodeToString(suffix)
	version := "v0.0.0-imagetest-" + id
	image := "localhost/flurry:" + version
	volume := "flurry-imagetest-" + id

	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "bash", "build.sh", "--version", version, "--engine", "podman")
	var buildErr bytes.Buffer
	build.Stderr = &buildErr
	start := time.Now()
	out, err := build.Output()
	if err != nil {
		t.Fatalf("build.sh: %v\n%s%s", err, out, buildErr.String())
	}
	// The documented tag=$(deploy/container/build.sh): the tag alone on stdout.
	if got := strings.TrimSpace(string(out)); got != "flurry:"+version {
		t.Errorf("build.sh printed %q on stdout; want the tag alone, flurry:%s", got, version)
	}
	t.Logf("build.sh (release build and image): %v", time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		p.quiet("rmi", "-f", image)
	})
	t.Cleanup(func() { p.quiet("volume", "rm", "-f", volume) })

	// What the image says about itself.
	var cfg []struct {
		Config struct {
			User       string
			Volumes    map[string]struct{}
			StopSignal string
			Entrypoint []string
		}
		Healthcheck *struct{ Test []string } `json:"Healthcheck"`
	}
	if err := json.Unmarshal([]byte(p.out(t, "image", "inspect", image)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	c := cfg[0]
	if c.Config.User != "65532:65532" || len(c.Config.Volumes) != 1 || c.Config.StopSignal != "SIGTERM" {
		t.Errorf("image config: user %q volumes %v stop signal %q; want 65532:65532, /var/lib/flurry, SIGTERM", c.Config.User, c.Config.Volumes, c.Config.StopSignal)
	}
	if _, ok := c.Config.Volumes["/var/lib/flurry"]; !ok {
		t.Errorf("image volumes %v, want /var/lib/flurry", c.Config.Volumes)
	}
	if c.Healthcheck == nil || !strings.Contains(strings.Join(c.Healthcheck.Test, " "), "/flurry health") {
		t.Errorf("image health check %+v, want /flurry health (built without --format docker?)", c.Healthcheck)
	}

	// First container: IDs, user, health, CA bundle, a clean stop.
	first := runServer(t, p, "flurry-imagetest-a-"+id, image, volume)
	before := map[string]uint64{}
	for _, ns := range []string{"default", "segment"} {
		before[ns] = maxID(t, first.base, ns)
	}
	checkUser(t, p, first.name)
	checkHealthy(t, p, first.name)
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err == nil {
		copied := filepath.Join(t.TempDir(), "ca.crt")
		p.out(t, "cp", first.name+":/etc/ssl/certs/ca-certificates.crt", copied)
		if got, err := os.ReadFile(copied); err != nil || !bytes.Equal(got, ca) {
			t.Errorf("the image's /etc/ssl/certs/ca-certificates.crt is not this machine's bundle (%v)", err)
		}
	}
	stopClean(t, p, first.name)

	// A new container on the same volume: the lease journal and the segment file
	// store are there, so it starts above what the first one issued.
	second := runServer(t, p, "flurry-imagetest-b-"+id, image, volume)
	for _, ns := range []string{"default", "segment"} {
		if after := maxID(t, second.base, ns); after <= before[ns] {
			t.Errorf("namespace %s: ID %d after the restart, not above %d before it: the volume lost the state", ns, after, before[ns])
		}
	}
	logs := p.logs(t, second.name)
	if strings.Contains(logs, "above=1970-01-01T00:00:00.000Z") {
		t.Errorf("the second container started its lease from nothing, not from the journal in the volume:\n%s", logs)
	}
	checkHealthy(t, p, second.name)
	stopClean(t, p, second.name)
}

type server struct {
	name, base string
}

// runServer starts a container of image with its default command and waits for
// /readyz; the container is removed when the test ends.
func runServer(t *testing.T, p *podman, name, image, volume string) server {
	t.Helper()
	port := deploytest.FreePort(t)
	args := append([]string{"run", "-d", "--name", name, "--read-only",
		"-p", fmt.Sprintf("127.0.0.1:%d:8080", port), "-v", volume + ":/var/lib/flurry"}, p.run...)
	p.out(t, append(args, image)...)
	t.Cleanup(func() { p.quiet("rm", "-f", "-t", "0", name) })
	s := server{name: name, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(90 * time.Second)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		res, err := hc.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if state := p.out(t, "inspect", "--format", "{{.State.Status}}", name); state != "running" {
			t.Fatalf("container %s is %s:\n%s", name, state, p.logs(t, name))
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s not ready within 90 s: %v\n%s", name, err, p.logs(t, name))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// maxID asks namespace ns for three IDs and returns the largest.
func maxID(t *testing.T, base, ns string) uint64 {
	t.Helper()
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get(base + "/v1/" + ns + "/next?count=3")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		IDs []string `json:"ids"`
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", ns, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || len(body.IDs) != 3 {
		t.Fatalf("%s: %v %v", ns, err, body.IDs)
	}
	var top uint64
	for _, s := range body.IDs {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: ID %q: %v", ns, s, err)
		}
		top = max(top, v)
	}
	return top
}

// checkUser reads the server process's real, effective, saved and file-system
// user and group ids from the host's /proc: 65532 each, never 0.
func checkUser(t *testing.T, p *podman, name string) {
	t.Helper()
	pid := p.out(t, "inspect", "--format", "{{.State.Pid}}", name)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, ids, ok := strings.Cut(line, ":")
		if !ok || (key != "Uid" && key != "Gid") {
			continue
		}
		for _, f := range strings.Fields(ids) {
			if f != "65532" {
				t.Errorf("the server runs with %s %s, want 65532 (non-root) in every field", key, strings.TrimSpace(ids))
				break
			}
		}
	}
}

// checkHealthy runs the image's HEALTHCHECK once and reads the state podman
// recorded.
func checkHealthy(t *testing.T, p *podman, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := p.cmd(ctx, "healthcheck", "run", name).CombinedOutput()
	if err != nil {
		t.Errorf("podman healthcheck run %s: %v\n%s", name, err, out)
	}
	if st := p.out(t, "inspect", "--format", "{{.State.Health.Status}}", name); st != "healthy" {
		t.Errorf("health after the check: %q, want healthy", st)
	}
}

// stopClean stops the container as `podman stop` does (the image's STOPSIGNAL,
// SIGTERM, then SIGKILL after the timeout) and checks the server ended by itself:
// exit status 0 (137 would be the kill) and its last log line.
func stopClean(t *testing.T, p *podman, name string) {
	t.Helper()
	const grace = 45 // seconds, as the Dockerfile advises
	start := time.Now()
	p.out(t, "stop", "-t", strconv.Itoa(grace), name)
	took := time.Since(start)
	code := p.out(t, "inspect", "--format", "{{.State.ExitCode}}", name)
	logs := p.logs(t, name)
	if code != "0" || !strings.Contains(logs, "flurry: stopped") {
		t.Errorf("podman stop %s: exit status %s after %v, want 0 and \"flurry: stopped\" before the %d s kill:\n%s", name, code, took.Round(time.Millisecond), grace, logs)
		return
	}
	t.Logf("%s stopped by itself on SIGTERM; podman stop took %v", name, took.Round(time.Millisecond))
}
