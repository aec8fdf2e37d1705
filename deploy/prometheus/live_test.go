// Package prometheus holds flurry's alerting rules; this test runs them, and the
// Grafana dashboard's queries, on a real Prometheus scraping real flurry servers
// whose stores and processes it breaks.
package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/deploy/internal/deploytest"
)

// The servers of the live test, by the name the report uses.
const (
	srvA = "a" // Redis-backed namespaces (orders: lease, tickets: segment) and a layout near its end
	srvB = "b" // the embedded default; killed, then restarted with its clock behind
	srvC = "c" // a fixed node value; paused past its lease while another server takes the value
)

// serverRoles says what each server is, for the report.
var serverRoles = [][2]string{
	{srvA, "namespaces `orders` (snowflake, lease in Redis, budget 2s, window 500ms), `tickets` (segment in the same Redis, `max_step: 200`), `shortlife` (snowflake on a file lease, a layout whose time field ends about 20 days from now)"},
	{srvB, "the embedded default (`default` snowflake, `segment`), file stores in its data directory"},
	{srvC, "namespace `pinned` (snowflake, `fixed: 0`, lease in a second Redis, budget 2s, window 500ms); a fourth server with the same configuration, not scraped, takes the value while c is paused"},
}

// alert is one entry of Prometheus's /api/v1/alerts.
type alert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
	Value    string            `json:"value"`
}

// rig is the running set: servers, stores, Prometheus.
type rig struct {
	t        *testing.T
	bin, dir string
	prom     string            // Prometheus's base URL
	servers  map[string]string // name -> host:port
	names    map[string]string // host:port -> name
	procs    map[string]*deploytest.Proc
	http     *http.Client

	mu      sync.Mutex
	answers map[string]map[string]int // server -> status (or error) -> count
	highest map[string]uint64         // server and path -> the highest ID answered
	seen    map[string]*seenAlert     // the latest episode of each alert (name and labels)
	history []*seenAlert              // every episode, in the order seen
	events  []event                   // what the test did, when
}

type seenAlert struct {
	name, labels     string
	activeAt         time.Time // Prometheus's: when the condition began (pending)
	firing, resolved time.Time // when the test first saw it firing, then gone
	phase            string
}

type event struct {
	at   time.Time
	what string
}

// TestMonitoringLive starts a Prometheus with deploy/prometheus/flurry-rules.yml as
// it is (a 1 s scrape and evaluation interval; the rules' `for:` untouched) and
// three flurry servers under a small load, then:
//
//   - healthy: every query of deploy/grafana/flurry-dashboard.json returns data,
//     and only the alerts a healthy rig should raise are active (the layout near
//     its end; a segment runway of seconds);
//   - breaks things: stops server a's Redis, kills server b (SIGKILL), pauses
//     server c (SIGSTOP) past its lease's TTL while another server takes c's fixed
//     node value, and waits for the alerts each should raise to go pending or
//     firing (FlurryDown and FlurryLeaseNotHeld need their full minute);
//   - recovers: Redis back on its data, b restarted on its data directory with its
//     clock five minutes behind (FLURRY_CLOCK_SKEW), the other holder of c's value
//     stopped; and waits for the alerts of the repaired conditions to clear and
//     for those the recovery raises (the lost lease, the clock behind) to fire.
//
// Alerts whose `for:` is 2 or 5 minutes are seen pending only, and alerts over
// 5- or 10-minute windows are not waited for to clear; promtool's unit tests
// (flurry-rules.test.yml) cover both. With FLURRY_WRITE_DOCS=1 the test writes
// what it saw into docs/operations.md (make monitoring-docs).
func TestMonitoringLive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs Prometheus and four flurry servers for about two minutes; run: cd deploy && go test -run TestMonitoringLive ./prometheus")
	}
	promBin := deploytest.Tool(t, "prometheus", "prometheus")
	redisBin := deploytest.Tool(t, "redis-server", "redis-server")
	dir := t.TempDir()
	r := &rig{t: t, dir: dir, bin: deploytest.BuildFlurry(t, dir), http: &http.Client{Timeout: 5 * time.Second},
		answers: map[string]map[string]int{}, highest: map[string]uint64{}, servers: map[string]string{}, names: map[string]string{}, procs: map[string]*deploytest.Proc{}, seen: map[string]*seenAlert{}}
	for _, n := range []string{srvA, srvB, srvC, "d"} {
		addr := fmt.Sprintf("127.0.0.1:%d", deploytest.FreePort(t))
		r.servers[n], r.names[addr] = addr, n
	}

	// The stores: a Redis for server a, one for c and d, each this test's own.
	redisA := newRedis(t, redisBin, filepath.Join(dir, "redis-a"))
	redisC := newRedis(t, redisBin, filepath.Join(dir, "redis-c"))
	redisA.start()
	redisC.start()

	// Server a's short layout: 32 bits of milliseconds (49.7 days) from 30 days ago.
	epoch := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	r.writeConfig(srvA, fmt.Sprintf(`namespaces:
  orders:
    strategy: snowflake
    snowflake:
      lease: {store: "redis://%[1]s/0", budget: 2s, window: 500ms}
  tickets:
    strategy: segment
    segment:
      stores: ["redis://%[1]s/0"]
      create: {step: 100}
      max_step: 200
      fetch_timeout: 1s
  shortlife:
    strategy: snowflake
    snowflake:
      layout: "time:32:1ms:%[2]s,worker:6,seq:16"
`, redisA.addr, epoch))
	pinned := fmt.Sprintf(`namespaces:
  pinned:
    strategy: snowflake
    snowflake:
      lease: {store: "redis://%s/0", fixed: 0, budget: 2s, window: 500ms}
`, redisC.addr)
	r.writeConfig(srvC, pinned)
	r.writeConfig("d", pinned)

	r.startServer(srvA, nil)
	r.startServer(srvB, nil)
	r.startServer(srvC, nil)
	r.startPrometheus(promBin)

	ctx, stopLoad := context.WithCancel(context.Background())
	var load sync.WaitGroup
	defer func() { stopLoad(); load.Wait() }()
	for _, target := range []struct {
		name  string
		paths []string
	}{
		// count=0 is the caller's mistake (400): the error panels get a series.
		{srvA, []string{"/v1/orders/next", "/v1/tickets/next?count=10", "/v1/orders/next?count=0"}},
		{srvB, []string{"/v1/default/next", "/v1/segment/next"}},
		{srvC, []string{"/v1/pinned/next"}},
	} {
		load.Add(1)
		go func() {
			defer load.Done()
			r.load(ctx, target.name, target.paths)
		}()
	}

	// Healthy.
	start := time.Now()
	r.note("Prometheus and servers a, b, c up, under load (10 requests/s per route)")
	r.waitFor("healthy", start.Add(60*time.Second), []want{
		{"FlurryLayoutLifeBelowYear", srvA, "shortlife", firing},
		{"FlurryLayoutLifeBelowMonth", srvA, "shortlife", firing},
		{"FlurrySegmentRunwayLow", srvA, "tickets", active},
	})
	// The rates need a few scrapes of every series.
	time.Sleep(6 * time.Second)
	r.checkQuiet([]want{
		{"FlurryLayoutLifeBelowYear", srvA, "shortlife", firing},
		{"FlurryLayoutLifeBelowMonth", srvA, "shortlife", firing},
		{"FlurrySegmentRunwayLow", srvA, "tickets", active},
	})
	panels := r.dashboard()

	// Broken.
	t0 := time.Now()
	redisA.kill()
	r.procs[srvB].Signal(syscall.SIGKILL)
	r.procs[srvC].Signal(syscall.SIGSTOP)
	r.note("server a's Redis killed; server b killed (SIGKILL); server c paused (SIGSTOP)")
	// c's lease (TTL 3 s with budget 2s, window 500ms) runs out while it sleeps;
	// d, configured with the same fixed value, takes it.
	time.Sleep(5 * time.Second)
	r.startServer("d", nil)
	r.procs[srvC].Signal(syscall.SIGCONT)
	r.note("server d took c's fixed node value; server c resumed (SIGCONT)")
	r.waitFor("broken", t0.Add(120*time.Second), []want{
		{"FlurryLeaseRenewalsFailing", srvA, "orders", firing},
		{"FlurrySegmentFetchFailing", srvA, "tickets", firing},
		{"FlurryNamespaceNotReady", srvA, "orders", active},
		{"FlurryNamespaceNotReady", srvA, "tickets", active},
		{"FlurryUnavailableAnswers", srvA, "orders", active},
		{"FlurryDown", srvB, "", firing},
		{"FlurryLeaseLost", srvC, "pinned", firing},
		{"FlurryLeaseNotHeld", srvC, "pinned", firing},
		{"FlurryNamespaceNotReady", srvC, "pinned", active},
	})

	// Recovered.
	t1 := time.Now()
	redisA.start()
	r.mu.Lock()
	highestB := r.highest[srvB+"/v1/default/next"]
	r.mu.Unlock()
	bLog := r.procs[srvB].Log()
	// Five minutes: a leased namespace issues ahead of a clock up to max_drift (1
	// minute by default) behind its mark, on a logical clock; further behind it
	// refuses, which is what the clock alerts are about.
	r.startServer(srvB, []string{"FLURRY_CLOCK_SKEW=-5m"})
	// That far behind what it issued before the kill, b must refuse.
	if code, body := r.ask(srvB, "/v1/default/next"); code != http.StatusServiceUnavailable {
		_, info := r.ask(srvB, "/v1/info")
		r.t.Errorf("server b, restarted with its clock 5 minutes behind, answered %d %s (its highest ID before the kill: %d), want 503\ninfo: %s\nbefore:\n%s\nafter:\n%s", code, body, highestB, info, bLog, r.procs[srvB].Log())
	}
	r.procs["d"].Signal(syscall.SIGTERM)
	if err := r.procs["d"].Wait(t, time.Minute); err != nil {
		t.Errorf("server d: %v\n%s", err, r.procs["d"].Log())
	}
	r.note("server a's Redis restarted on its data; server b restarted on its data directory with its clock 5 minutes behind; server d stopped (SIGTERM: releases the value)")
	r.waitFor("recovered", t1.Add(60*time.Second), []want{
		{"FlurryDown", srvB, "", gone},
		{"FlurryLeaseNotHeld", srvC, "pinned", gone},
		{"FlurryNamespaceNotReady", srvC, "pinned", gone},
		{"FlurryNamespaceNotReady", srvA, "orders", gone},
		{"FlurryNamespaceNotReady", srvA, "tickets", gone},
		{"FlurryLeaseLost", srvA, "orders", firing},
		{"FlurryClockBehind", srvB, "default", firing},
		{"FlurryClockBehindRefusing", srvB, "default", firing},
	})
	t.Logf("live monitoring: healthy %v, broken %v, recovered %v", t0.Sub(start).Round(time.Second), t1.Sub(t0).Round(time.Second), time.Since(t1).Round(time.Second))

	if os.Getenv("FLURRY_WRITE_DOCS") == "1" && !t.Failed() {
		r.writeDocs(start, panels)
	}
}

// States a want asks for: pending or firing (active), firing, or absent (gone).
const (
	active = "active"
	firing = "firing"
	gone   = "gone"
)

type want struct {
	alert, server, namespace, state string
}

func (w want) String() string {
	s := w.alert + "{server " + w.server
	if w.namespace != "" {
		s += ", namespace " + w.namespace
	}
	return s + "} " + w.state
}

func (r *rig) note(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{time.Now(), what})
	r.t.Logf("%s: %s", time.Now().Format("15:04:05"), what)
}

func (r *rig) writeConfig(name, namespaces string) {
	r.t.Helper()
	cfg := fmt.Sprintf("listen: %s\ndata_dir: %s\n%s", r.servers[name], filepath.Join(r.dir, "data-"+name), namespaces)
	if err := os.WriteFile(filepath.Join(r.dir, name+".yaml"), []byte(cfg), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// startServer runs flurry serve as server name (its configuration file if the
// test wrote one, else the embedded default) and waits for /readyz.
func (r *rig) startServer(name string, env []string) {
	r.t.Helper()
	cfg := filepath.Join(r.dir, name+".yaml")
	args := []string{"serve", "--listen", r.servers[name], "--data", filepath.Join(r.dir, "data-"+name)}
	if _, err := os.Stat(cfg); err == nil {
		args = append(args, "--config", cfg)
	}
	p := deploytest.Start(r.t, "flurry serve "+name, env, r.bin, args...)
	r.procs[name] = p
	// Server b restarted with its clock behind is not ready (it refuses); it listens.
	path := "/readyz"
	if len(env) > 0 {
		path = "/healthz"
	}
	deploytest.WaitHTTP(r.t, "http://"+r.servers[name]+path, 60*time.Second, p)
}

func (r *rig) startPrometheus(bin string) {
	r.t.Helper()
	rules, err := filepath.Abs("flurry-rules.yml")
	if err != nil {
		r.t.Fatal(err)
	}
	var targets []string
	for _, n := range []string{srvA, srvB, srvC} {
		targets = append(targets, `"`+r.servers[n]+`"`)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: flurry
    static_configs:
      - targets: [%s]
`, rules, strings.Join(targets, ", "))
	file := filepath.Join(r.dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		r.t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", deploytest.FreePort(r.t))
	p := deploytest.Start(r.t, "prometheus", nil, bin, "--config.file="+file,
		"--storage.tsdb.path="+filepath.Join(r.dir, "tsdb"), "--web.listen-address="+addr, "--log.level=warn")
	r.prom = "http://" + addr
	deploytest.WaitHTTP(r.t, r.prom+"/-/ready", 60*time.Second, p)
	r.procs["prometheus"] = p
}

// load asks server name for the paths, ten rounds a second, until ctx ends (at
// most 10 minutes' worth).
func (r *rig) load(ctx context.Context, name string, paths []string) {
	c := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range 6000 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, p := range paths {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.servers[name]+p, nil)
			res, err := c.Do(req)
			status := "no answer"
			var top uint64
			if err == nil {
				var body struct {
					IDs []string `json:"ids"`
				}
				json.NewDecoder(res.Body).Decode(&body)
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				status = strconv.Itoa(res.StatusCode)
				for _, id := range body.IDs {
					if v, err := strconv.ParseUint(id, 10, 64); err == nil {
						top = max(top, v)
					}
				}
			}
			r.mu.Lock()
			if r.answers[name] == nil {
				r.answers[name] = map[string]int{}
			}
			r.answers[name][status]++
			r.highest[name+p] = max(r.highest[name+p], top)
			r.mu.Unlock()
		}
	}
}

// ask sends one GET to server name.
func (r *rig) ask(name, path string) (int, string) {
	r.t.Helper()
	res, err := r.http.Get("http://" + r.servers[name] + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 8192))
	return res.StatusCode, strings.TrimSpace(string(b))
}

// alerts reads Prometheus's active alerts and records what it sees.
func (r *rig) alerts(phase string) []alert {
	r.t.Helper()
	var body struct {
		Data struct {
			Alerts []alert `json:"alerts"`
		} `json:"data"`
	}
	r.get("/api/v1/alerts", nil, &body)
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	present := map[string]bool{}
	for _, a := range body.Data.Alerts {
		k := r.key(a)
		present[k] = true
		s := r.seen[k]
		if s == nil || !s.resolved.IsZero() { // new, or active again: a new episode
			s = &seenAlert{name: a.Labels["alertname"], labels: r.labelText(a.Labels), activeAt: a.ActiveAt, phase: phase}
			r.seen[k] = s
			r.history = append(r.history, s)
			if a.State != "firing" {
				r.logAlert(now, s, a.State)
			}
		}
		if a.State == "firing" && s.firing.IsZero() {
			s.firing = now
			r.logAlert(now, s, "firing")
		}
	}
	var cleared []*seenAlert
	for k, s := range r.seen {
		if !present[k] && s.resolved.IsZero() {
			s.resolved = now
			cleared = append(cleared, s)
		}
	}
	sort.Slice(cleared, func(i, j int) bool { return cleared[i].name+cleared[i].labels < cleared[j].name+cleared[j].labels })
	for _, s := range cleared {
		r.logAlert(now, s, "cleared")
	}
	return body.Data.Alerts
}

// logAlert prints one alert's change as the test sees it, so that a run's log
// reads as the alerts' timeline: pending, firing, cleared.
func (r *rig) logAlert(at time.Time, s *seenAlert, what string) {
	r.t.Logf("%s: alert %s %s: %s", at.Format("15:04:05"), s.name, s.labels, what)
}

func (r *rig) key(a alert) string {
	return a.Labels["alertname"] + " " + r.labelText(a.Labels)
}

// labelText prints an alert's labels other than its name, the server by its name
// in this test (its address changes with every run).
func (r *rig) labelText(l map[string]string) string {
	var keys []string
	for k := range l {
		if k != "alertname" && k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		v := l[k]
		if k == "instance" {
			if n, ok := r.names[v]; ok {
				v = n
			}
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}

// state is w's alert's state now: "pending", "firing", or "" when not active.
func (r *rig) state(as []alert, w want) string {
	for _, a := range as {
		if a.Labels["alertname"] == w.alert && r.names[a.Labels["instance"]] == w.server && a.Labels["namespace"] == w.namespace {
			return a.State
		}
	}
	return ""
}

func (w want) met(state string) bool {
	switch w.state {
	case active:
		return state == "pending" || state == "firing"
	case firing:
		return state == "firing"
	default:
		return state == ""
	}
}

// waitFor polls the alerts every second until each want is met at once, or fails
// at the deadline naming those that are not.
func (r *rig) waitFor(phase string, deadline time.Time, wants []want) {
	r.t.Helper()
	for {
		as := r.alerts(phase)
		var missing []string
		for _, w := range wants {
			if st := r.state(as, w); !w.met(st) {
				missing = append(missing, fmt.Sprintf("%v (now %q)", w, st))
			}
		}
		if len(missing) == 0 {
			r.t.Logf("%s: all %d expected alert states seen", phase, len(wants))
			return
		}
		if time.Now().After(deadline) {
			var now []string
			for _, a := range as {
				now = append(now, a.State+" "+r.key(a))
			}
			r.mu.Lock()
			logs := fmt.Sprintf("\nanswers to the load: %v", r.answers)
			r.mu.Unlock()
			for n, p := range r.procs {
				logs += fmt.Sprintf("\n--- %s:\n%s", n, tail(p.Log(), 15))
			}
			r.t.Fatalf("%s: not seen by the deadline:\n  %s\nactive alerts:\n  %s%s", phase, strings.Join(missing, "\n  "), strings.Join(now, "\n  "), logs)
		}
		time.Sleep(time.Second)
	}
}

// checkQuiet fails if any alert is active that is not one of allowed: the rules
// must stay quiet on healthy servers.
func (r *rig) checkQuiet(allowed []want) {
	r.t.Helper()
	for _, a := range r.alerts("healthy") {
		ok := false
		for _, w := range allowed {
			if a.Labels["alertname"] == w.alert && r.names[a.Labels["instance"]] == w.server && a.Labels["namespace"] == w.namespace {
				ok = true
			}
		}
		if !ok {
			r.t.Errorf("alert %s is %s on a healthy rig", r.key(a), a.State)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// get asks Prometheus's HTTP API and decodes the answer into v.
func (r *rig) get(path string, q url.Values, v any) {
	r.t.Helper()
	u := r.prom + path
	if q != nil {
		u += "?" + q.Encode()
	}
	res, err := r.http.Get(u)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		r.t.Fatalf("%s: %s %s", u, res.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		r.t.Fatalf("%s: %v", u, err)
	}
}

// panelResult is one dashboard query and what Prometheus answered.
type panelResult struct {
	panel, query string
	series       int
	sample       string
}

// rateInterval stands for Grafana's $__rate_interval: four scrape intervals, the
// least it takes (a data source set to this Prometheus's 1 s scrape).
const rateInterval = "4s"

// dashboard runs every query of the Grafana dashboard, its template variables
// set to All (".*", the dashboard's allValue) and $__rate_interval to four scrape
// intervals, and fails for each that returns no series. The variables' own
// label_values queries go to the label values API, as Grafana sends them.
func (r *rig) dashboard() []panelResult {
	r.t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "grafana", "flurry-dashboard.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		r.t.Fatal(err)
	}
	subst := strings.NewReplacer("$__rate_interval", rateInterval, "${instance}", ".*", "$instance", ".*", "${namespace}", ".*", "$namespace", ".*")
	var out []panelResult
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_]+)\)$`)
	for _, v := range dash.Templating.List {
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			continue
		}
		var body struct {
			Data []string `json:"data"`
		}
		r.get("/api/v1/label/"+m[2]+"/values", url.Values{"match[]": {subst.Replace(m[1])}}, &body)
		if len(body.Data) == 0 {
			r.t.Errorf("variable %s: %s returns no values", v.Name, v.Definition)
		}
		sample := strings.Join(body.Data, ", ")
		if m[2] == "instance" {
			sample = fmt.Sprintf("%d servers", len(body.Data))
		}
		out = append(out, panelResult{panel: "variable " + v.Name, query: v.Definition, series: len(body.Data), sample: sample})
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			q := subst.Replace(tg.Expr)
			var body struct {
				Data struct {
					Result []struct {
						Metric map[string]string `json:"metric"`
						Value  [2]any            `json:"value"`
					} `json:"result"`
				} `json:"data"`
			}
			r.get("/api/v1/query", url.Values{"query": {q}}, &body)
			res := body.Data.Result
			// Data is a number: a quantile of a route without requests is NaN,
			// which Grafana draws as nothing.
			value := func(i int) float64 {
				v, _ := res[i].Value[1].(string)
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsInf(f, 0) {
					return math.NaN()
				}
				return f
			}
			finite := 0
			for i := range res {
				if !math.IsNaN(value(i)) {
					finite++
				}
			}
			if finite == 0 {
				r.t.Errorf("panel %q: %s returns no data (%d series, none a number)", p.Title, q, len(res))
				out = append(out, panelResult{panel: p.Title, query: q})
				continue
			}
			// The sample: a number before a NaN, a non-zero value before a zero, a
			// series of server a before others (it has the most namespaces), then
			// label order.
			rank := func(i int) int {
				f, k := value(i), 0
				if math.IsNaN(f) {
					k += 4
				} else if f == 0 {
					k += 2
				}
				if inst, ok := res[i].Metric["instance"]; ok && r.names[inst] != srvA {
					k++
				}
				return k
			}
			sort.SliceStable(res, func(i, j int) bool {
				if ri, rj := rank(i), rank(j); ri != rj {
					return ri < rj
				}
				return r.labelText(res[i].Metric) < r.labelText(res[j].Metric)
			})
			val, _ := res[0].Value[1].(string)
			delete(res[0].Metric, "job")
			label := r.labelText(res[0].Metric)
			sample := formatValue(val)
			if label != "" {
				sample = "{" + label + "} " + sample
			}
			out = append(out, panelResult{panel: p.Title, query: q, series: finite, sample: sample})
		}
	}
	r.t.Logf("dashboard: %d queries answered", len(out))
	return out
}

// formatValue rounds a sample to 4 significant digits.
func formatValue(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return s
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}
