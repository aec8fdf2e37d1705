// Command monitoring-demo runs flurry's monitoring in one command (make
// monitoring-demo): three flurry servers on loopback with throwaway data, a small
// load on each, and Debian's Prometheus scraping them with the shipped alerting
// rules (deploy/prometheus/flurry-rules.yml). It prints where to look and runs
// until Ctrl-C (SIGINT or SIGTERM), then stops every process it started and
// removes its directory. With DEMO_FAULT=1 one more namespace keeps its lease in
// a Redis of the demo's own, which the demo stops after FaultAfter so that the
// lease alerts fire.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FaultAfter is how long DEMO_FAULT=1 leaves Redis up: long enough for
// Prometheus to scrape the healthy lease first.
const FaultAfter = 20 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Getenv("DEMO_FAULT") == "1", os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "monitoring-demo: %v\n", err)
		os.Exit(1)
	}
}

// demo is what run started, to stop in reverse order.
type demo struct {
	dir   string
	out   io.Writer
	procs []*proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

func run(ctx context.Context, fault bool, out io.Writer) (err error) {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		return errors.New("prometheus not installed: apt-get install prometheus (Debian's package), or put a prometheus binary on PATH")
	}
	var redisBin string
	if fault {
		if redisBin, err = exec.LookPath("redis-server"); err != nil {
			return errors.New("DEMO_FAULT=1 breaks a Redis lease store, and redis-server is not installed: apt-get install redis-server")
		}
	}
	dir, err := os.MkdirTemp("", "flurry-monitoring-demo-")
	if err != nil {
		return err
	}
	d := &demo{dir: dir, out: out}
	defer func() {
		if cerr := d.cleanup(); err == nil {
			err = cerr
		}
	}()

	bin := os.Getenv("FLURRY_BIN")
	if bin == "" {
		fmt.Fprintln(out, "building flurry (go build -tags flurry_full ./cmd/flurry)...")
		bin = filepath.Join(dir, "flurry")
		b := exec.CommandContext(ctx, "go", "build", "-tags", "flurry_full", "-o", bin, "./cmd/flurry")
		b.Dir = root
		if o, berr := b.CombinedOutput(); berr != nil {
			return fmt.Errorf("go build ./cmd/flurry: %v\n%s", berr, o)
		}
	}

	var redisAddr string
	if fault {
		redisAddr, err = freeAddr()
		if err != nil {
			return err
		}
		_, port, _ := net.SplitHostPort(redisAddr)
		if err := d.start(ctx, "redis", redisBin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", dir); err != nil {
			return err
		}
		if err := waitTCP(ctx, redisAddr, d.procs[len(d.procs)-1]); err != nil {
			return err
		}
	}

	// Three servers sharing one file lease store (each holds its own node value)
	// and one file segment store, whose blocks of 100,000 IDs keep the runway
	// alert quiet at the demo's rate.
	var servers []string
	for i := range 3 {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		name := string(rune('a' + i))
		cfg := fmt.Sprintf(`listen: %s
data_dir: %s
namespaces:
  default:
    strategy: snowflake
    snowflake:
      lease: {store: "file://%s"}
  segment:
    strategy: segment
    segment:
      stores: ["file://%s"]
      create: {step: 100000}
`, addr, filepath.Join(dir, "data-"+name), filepath.Join(dir, "leases"), filepath.Join(dir, "segments"))
		if fault && i == 0 {
			cfg += fmt.Sprintf(`  orders:
    strategy: snowflake
    snowflake:
      lease: {store: "redis://%s/0", budget: 2s, window: 500ms}
`, redisAddr)
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
			return err
		}
		if err := d.start(ctx, "flurry serve "+name, bin, "serve", "--config", file); err != nil {
			return err
		}
		if err := waitHTTP(ctx, "http://"+addr+"/readyz", d.procs[len(d.procs)-1]); err != nil {
			return err
		}
		servers = append(servers, addr)
	}

	promAddr, err := freeAddr()
	if err != nil {
		return err
	}
	promCfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files: [%q]
scrape_configs:
  - job_name: flurry
    static_configs:
      - targets: ["%s"]
`, filepath.Join(root, "deploy", "prometheus", "flurry-rules.yml"), strings.Join(servers, `", "`))), 0o600); err != nil {
		return err
	}
	if err := d.start(ctx, "prometheus", promBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn"); err != nil {
		return err
	}
	prom := "http://" + promAddr
	if err := waitHTTP(ctx, prom+"/-/ready", d.procs[len(d.procs)-1]); err != nil {
		return err
	}

	var load sync.WaitGroup
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer func() { stopLoad(); load.Wait() }()
	for i, s := range servers {
		paths := []string{"/v1/default/next", "/v1/segment/next"}
		if fault && i == 0 {
			paths = append(paths, "/v1/orders/next")
		}
		load.Add(1)
		go func() { defer load.Done(); askLoop(loadCtx, s, paths) }()
	}

	fmt.Fprintf(out, "flurry monitoring demo: running; Ctrl-C stops it and removes everything it started\n")
	for i, s := range servers {
		fmt.Fprintf(out, "  flurry server %c:  http://%s/  (its dashboard; /metrics is what Prometheus scrapes)  pid %d\n", 'a'+i, s, d.procs[len(d.procs)-1-len(servers)+i].cmd.Process.Pid)
	}
	fmt.Fprintf(out, "  Prometheus:       %s/  pid %d\n", prom, d.procs[len(d.procs)-1].cmd.Process.Pid)
	fmt.Fprintf(out, "  alerts:           %s/alerts  (the rules of deploy/prometheus/flurry-rules.yml)\n", prom)
	fmt.Fprintf(out, "  targets:          %s/targets\n", prom)
	fmt.Fprintf(out, "  Grafana:          import %s (Dashboards > New > Import), with a Prometheus data source at %s\n",
		filepath.Join(root, "deploy", "grafana", "flurry-dashboard.json"), prom)
	fmt.Fprintf(out, "  data:             %s\n", dir)
	if fault {
		fmt.Fprintf(out, "  fault:            server a's namespace orders keeps its lease in Redis %s (pid %d), stopped in %s: FlurryLeaseRenewalsFailing fires at once, the alerts with a for: go pending, then firing\n",
			redisAddr, d.procs[0].cmd.Process.Pid, FaultAfter)
	}

	if fault {
		select {
		case <-ctx.Done():
		case <-time.After(FaultAfter):
			d.procs[0].cmd.Process.Signal(syscall.SIGKILL)
			<-d.procs[0].done
			fmt.Fprintf(out, "%s: fault: Redis stopped; the lease alerts of server a's orders fire on the alerts page\n", time.Now().Format("15:04:05"))
		}
	}
	// Run until Ctrl-C, or until a process the demo needs ends on its own.
	exited := make(chan *proc, len(d.procs))
	for _, p := range d.procs {
		go func() { <-p.done; exited <- p }()
	}
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "stopping")
			return nil
		case p := <-exited:
			if ctx.Err() != nil || fault && p == d.procs[0] {
				continue
			}
			return fmt.Errorf("%s exited on its own; its log:\n%s", p.name, tailFile(p.log, 2000))
		}
	}
}

// start runs a process whose output goes to a log file in the demo's directory.
func (d *demo) start(ctx context.Context, name, bin string, args ...string) error {
	log := filepath.Join(d.dir, strings.ReplaceAll(name, " ", "-")+".log")
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() { cmd.Wait(); close(p.done) }()
	d.procs = append(d.procs, p)
	return ctx.Err()
}

// cleanup stops the processes, last started first (SIGTERM, then SIGKILL after
// 10 s), and removes the directory.
func (d *demo) cleanup() error {
	for i := len(d.procs) - 1; i >= 0; i-- {
		p := d.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	if err := os.RemoveAll(d.dir); err != nil {
		return fmt.Errorf("removing %s: %w", d.dir, err)
	}
	fmt.Fprintf(d.out, "stopped %d processes, removed %s\n", len(d.procs), d.dir)
	return nil
}

// askLoop asks the server for IDs five times a second on each path, so that the
// rates and latencies have something to show.
func askLoop(ctx context.Context, addr string, paths []string) {
	c := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, p := range paths {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+p, nil)
			if res, err := c.Do(req); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	}
}

// repoRoot is the nearest directory above the working directory whose go.mod is
// flurry's main module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/flurryid/flurry\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no directory above %s holds flurry's go.mod: run the demo from a checkout (make monitoring-demo)", dir)
		}
	}
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHTTP waits up to a minute for url to answer 200, or for p to exit.
func waitHTTP(ctx context.Context, url string, p *proc) error {
	c := &http.Client{Timeout: time.Second}
	return waitUntil(ctx, p, url, func() bool {
		res, err := c.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// waitTCP waits up to a minute for addr to accept a connection, or for p to exit.
func waitTCP(ctx context.Context, addr string, p *proc) error {
	return waitUntil(ctx, p, addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func waitUntil(ctx context.Context, p *proc, what string, ok func() bool) error {
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s exited before %s answered; its log:\n%s", p.name, what, tailFile(p.log, 2000))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer at %s within a minute; its log:\n%s", p.name, what, tailFile(p.log, 2000))
		}
	}
	return nil
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
