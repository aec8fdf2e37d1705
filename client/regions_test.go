package client

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// multiRegionDoc is the page whose configurations these tests run.
const multiRegionDoc = "../docs/multi-region.md"

// docConfigs returns the YAML blocks of docs/multi-region.md by the file name
// their first line gives ("# eu-west.yaml: ...").
func docConfigs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(multiRegionDoc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		first, _, _ := strings.Cut(m[1], "\n")
		name, ok := strings.CutPrefix(first, "# ")
		name, _, _ = strings.Cut(name, ":")
		if !ok || !strings.HasSuffix(name, ".yaml") {
			t.Fatalf("a YAML block of %s does not start with its file name (# name.yaml: ...):\n%s", multiRegionDoc, m[1])
		}
		out[name] = m[1]
	}
	for _, want := range []string{"eu-west.yaml", "us-east.yaml", "ap-south.yaml"} {
		if out[want] == "" {
			t.Fatalf("%s has no %s block", multiRegionDoc, want)
		}
	}
	return out
}

// TestMultiRegionDocCheck runs `flurry serve --check` on every configuration of
// docs/multi-region.md as written, and `--check --other-region` on the regions
// together: eu-west and us-east pass; ap-south, which the page shows refused,
// is refused for its value and its residues.
func TestMultiRegionDocCheck(t *testing.T) {
	testenv.NeedScheme(t, "etcd")
	testenv.NeedScheme(t, "postgres")
	bin := buildFlurry(t)
	dir := t.TempDir()
	for name, text := range docConfigs(t) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"serve", "--check"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, name := range []string{"eu-west.yaml", "us-east.yaml", "ap-south.yaml"} {
		out, err := run("--config", name)
		if err != nil || !strings.HasSuffix(out, "ok\n") || !strings.Contains(out, "a pool of 256 values") {
			t.Errorf("serve --check --config %s: %v\n%s", name, err, out)
		}
	}
	if out, err := run("--config", "eu-west.yaml", "--other-region", "us-east.yaml"); err != nil || !strings.HasSuffix(out, "ok\n") {
		t.Errorf("eu-west with us-east: %v\n%s", err, out)
	}
	out, err := run("--config", "eu-west.yaml", "--other-region", "us-east.yaml", "--other-region", "ap-south.yaml")
	for _, want := range []string{"eu-west.yaml (region eu-west) and ap-south.yaml (region ap-south) both have region value 1",
		"eu-west.yaml and ap-south.yaml both serve residue 1 (mod 8)", "us-east.yaml and ap-south.yaml both serve residue 3 (mod 8)"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("the three regions together: %v; want %q in:\n%s", err, want, out)
		}
	}
}

// regionProc is one `flurry serve` process of a region, restartable on its
// address and data directory.
type regionProc struct {
	t      *testing.T
	bin    string
	conf   string
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

// localStores maps the page's store URLs to stores on this machine's etcd and
// PostgreSQL: one etcd prefix or PostgreSQL schema per distinct URL of the page,
// so the servers of a region share their stores and the regions share the
// registry, as on the page. The prefixes and schemas go away with the test.
type localStores struct {
	t    *testing.T
	etcd string // the etcd URL, without a prefix
	run  string // random, in every prefix
	urls map[string]string
}

func newLocalStores(t *testing.T) *localStores {
	testenv.NeedScheme(t, "etcd")
	testenv.NeedScheme(t, "postgres")
	ls := &localStores{t: t, etcd: testenv.Etcd.URL(t), run: fmt.Sprintf("flurry-test-regions-%d", time.Now().UnixNano()), urls: map[string]string{}}
	testenv.Postgres.URL(t)
	t.Cleanup(func() {
		out, err := exec.Command("etcdctl", "--endpoints", strings.TrimPrefix(ls.etcd, "etcd://"), "del", "--prefix", ls.run).CombinedOutput()
		if err != nil {
			t.Logf("removing the etcd keys under %s: %v %s", ls.run, err, out)
		}
	})
	return ls
}

func (ls *localStores) url(u string) string {
	if v, ok := ls.urls[u]; ok {
		return v
	}
	var v string
	if strings.HasPrefix(u, "etcd://") {
		v = fmt.Sprintf("%s/%s/%d", ls.etcd, ls.run, len(ls.urls))
	} else {
		v, _ = testenv.ScratchDB(ls.t, testenv.Postgres)
	}
	ls.urls[u] = v
	return v
}

// localize rewrites a configuration of the page for this machine: every store
// URL becomes one of stores, and listen and data_dir become a free port and a
// directory of the server's own.
func localize(t *testing.T, text string, stores *localStores) (yaml, url string) {
	t.Helper()
	text = regexp.MustCompile(`(etcd|postgres)://[^\s'"\]]+`).ReplaceAllStringFunc(text, stores.url)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	data := filepath.Join(t.TempDir(), "data")
	text = regexp.MustCompile(`(?m)^listen: .*$`).ReplaceAllString(text, "listen: "+addr)
	text = regexp.MustCompile(`(?m)^data_dir: .*$`).ReplaceAllString(text, "data_dir: "+data)
	return text, "http://" + addr
}

func startRegionProc(t *testing.T, bin, text string, stores *localStores) *regionProc {
	t.Helper()
	yaml, url := localize(t, text, stores)
	conf := filepath.Join(t.TempDir(), "flurry.yaml")
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &regionProc{t: t, bin: bin, conf: conf, url: url}
	p.start()
	t.Cleanup(func() {
		p.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p.url, p.stderr)
		}
	})
	return p
}

func (p *regionProc) start() {
	p.t.Helper()
	p.stderr = new(bytes.Buffer)
	p.cmd = exec.Command(p.bin, "serve", "--config", p.conf)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) || p.cmd.ProcessState != nil {
			p.t.Fatalf("flurry serve at %s not ready after 30s (last: %v)\n%s", p.url, err, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *regionProc) kill(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// TestMultiRegionFailover starts the page's two regions, eu-west and us-east,
// two `flurry serve` processes each, their stores on this machine's etcd and
// PostgreSQL (each region its own prefix and schemas, the registry shared), and a client of eu-west with us-east as its remote
// region. It SIGKILLs both eu-west servers: the client moves to us-east with no
// error reaching the caller; it starts them again (on their cached region
// claims): the client comes back once its backoff has passed. No ID comes
// twice; each region's IDs carry its datacenter value and its residues.
func TestMultiRegionFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts four flurry serve processes in two regions and fails one region over; run: go test -run TestMultiRegionFailover ./client/")
	}
	bin := buildFlurry(t)
	docs := docConfigs(t)
	stores := newLocalStores(t)
	eu := []*regionProc{startRegionProc(t, bin, docs["eu-west.yaml"], stores), startRegionProc(t, bin, docs["eu-west.yaml"], stores)}
	us := []*regionProc{startRegionProc(t, bin, docs["us-east.yaml"], stores), startRegionProc(t, bin, docs["us-east.yaml"], stores)}
	c, err := New(Options{Servers: []string{eu[0].url, eu[1].url},
		Remote: []Region{{Name: "us-east", Servers: []string{us[0].url, us[1].url}}},
		Batch:  50, Timeout: time.Second, Backoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lay, err := layout.Parse("time:41:1ms:2026-01-01T00:00:00Z,datacenter:3,worker:8,seq:11")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seen := map[string]map[flurry.ID]bool{"orders": {}, "invoices": {}}
	// region draws one ID of each namespace and returns the region it came
	// from, by the datacenter field and by the residue, which must agree.
	region := func() int64 {
		t.Helper()
		o, err := c.Next(ctx, "orders")
		if err != nil {
			t.Fatalf("orders: %v", err)
		}
		inv, err := c.Next(ctx, "invoices")
		if err != nil {
			t.Fatalf("invoices: %v", err)
		}
		for ns, id := range map[string]flurry.ID{"orders": o, "invoices": inv} {
			if seen[ns][id] {
				t.Fatalf("%s: ID %d handed out twice", ns, id)
			}
			seen[ns][id] = true
		}
		d, err := lay.Decode(o)
		if err != nil {
			t.Fatal(err)
		}
		return d.Nodes[0].Value
	}
	residues := map[int64]map[int64]bool{1: {}, 2: {}}
	count := func(n int, want int64) map[int64]int {
		got := map[int64]int{}
		for range n {
			got[region()]++
		}
		return got
	}
	if got := count(500, 1); got[1] != 500 {
		t.Fatalf("with eu-west up: IDs by datacenter %v; want all 500 from eu-west (1)", got)
	}
	for _, p := range eu {
		p.kill(syscall.SIGKILL)
	}
	// The buffers still hold eu-west IDs for a while; then us-east serves.
	if got := count(2000, 2); got[2] == 0 {
		t.Fatalf("with eu-west down: IDs by datacenter %v; want us-east's (2)", got)
	}
	for _, p := range eu {
		p.start()
	}
	back := false
	for deadline := time.Now().Add(60 * time.Second); !back; {
		if time.Now().After(deadline) {
			t.Fatalf("the client did not come back to eu-west within 60s of its restart: %+v", c.Stats())
		}
		back = region() == 1
	}
	// Once back, it stays: the next IDs all come from eu-west.
	if got := count(500, 1); got[1] != 500 {
		t.Fatalf("after eu-west came back: IDs by datacenter %v; want all from eu-west", got)
	}
	for id := range seen["invoices"] {
		r := int64(id) % 4
		residues[map[bool]int64{true: 1, false: 2}[r < 2]][r] = true
	}
	if len(residues[1]) == 0 || len(residues[2]) == 0 {
		t.Errorf("invoices residues seen: eu-west %v, us-east %v; want both regions'", residues[1], residues[2])
	}
	st := c.Stats()
	if st[2].Region != "us-east" || st[2].Requests+st[3].Requests == 0 {
		t.Errorf("stats: %+v", st)
	}
	t.Logf("stats: %+v", st)
}
