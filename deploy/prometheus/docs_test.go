package prometheus

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flurryid/flurry/deploy/internal/deploytest"
)

// The generated part of docs/operations.md lies between these lines.
const (
	docsBegin = "<!-- BEGIN live-monitoring: written by `make monitoring-docs` (deploy/prometheus/live_test.go); do not edit by hand -->"
	docsEnd   = "<!-- END live-monitoring -->"
)

// writeDocs replaces the generated part of docs/operations.md with what this run
// saw: the dashboard's queries with a sample each, and every alert that went
// active with its labels and times, counted from start.
func (r *rig) writeDocs(start time.Time, panels []panelResult) {
	r.t.Helper()
	file := filepath.Join(deploytest.RepoRoot(r.t), "docs", "operations.md")
	raw, err := os.ReadFile(file)
	if err != nil {
		r.t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	if i < 0 || j < i {
		r.t.Fatalf("%s lacks the lines %q and %q around the generated part", file, docsBegin, docsEnd)
	}
	promVersion := "Prometheus"
	if out, err := exec.Command("prometheus", "--version").CombinedOutput(); err == nil {
		// "prometheus, version 2.42.0+ds (branch: ...": the version word.
		if f := strings.Fields(strings.SplitN(string(out), "\n", 2)[0]); len(f) >= 3 {
			promVersion = "Prometheus " + f[2]
		}
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("+%ds", int(t.Sub(start).Round(time.Second).Seconds()))
	}
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", docsBegin)
	fmt.Fprintf(&b, "Run of %s on %s, 1 s scrape and evaluation interval. The servers (the `instance` label shows their names):\n\n", start.UTC().Format("2006-01-02"), promVersion)
	for _, s := range serverRoles {
		fmt.Fprintf(&b, "- **%s**: %s\n", s[0], s[1])
	}
	fmt.Fprintf(&b, "\n### The dashboard's queries\n\n")
	fmt.Fprintf(&b, "Every query of `deploy/grafana/flurry-dashboard.json`, with `$instance` and `$namespace` set to All (`.*`) and `$__rate_interval` to %s (four scrape intervals, Grafana's least), asked at the end of the healthy phase. *Series* counts those with a number (a latency quantile of a route without requests is NaN); the sample is a non-zero one of server a where there is one.\n\n", rateInterval)
	fmt.Fprintf(&b, "| panel | query | series | sample |\n|---|---|---:|---|\n")
	for _, p := range panels {
		fmt.Fprintf(&b, "| %s | `%s` | %d | %s |\n", cell(p.panel), cell(p.query), p.series, cell(p.sample))
	}
	fmt.Fprintf(&b, "\n### The alerts\n\nWhat the test did, in seconds from the start:\n\n")
	r.mu.Lock()
	for _, e := range r.events {
		fmt.Fprintf(&b, "- %s: %s\n", at(e.at), e.what)
	}
	seen := append([]*seenAlert(nil), r.history...)
	r.mu.Unlock()
	sort.Slice(seen, func(i, j int) bool {
		if !seen[i].activeAt.Equal(seen[j].activeAt) {
			return seen[i].activeAt.Before(seen[j].activeAt)
		}
		return seen[i].name+seen[i].labels < seen[j].name+seen[j].labels
	})
	fmt.Fprintf(&b, "\nEvery time an alert went active: *active* is Prometheus's `activeAt` (the condition began: pending, or firing at once without `for:`), *firing* and *cleared* when the test first saw it so (it polls every second).\n\n")
	fmt.Fprintf(&b, "| alert | labels | phase | active | firing | cleared |\n|---|---|---|---:|---:|---:|\n")
	for _, s := range seen {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", s.name, cell(s.labels), s.phase, at(s.activeAt), at(s.firing), at(s.resolved))
	}
	fmt.Fprintf(&b, "%s", docsEnd)
	doc = doc[:i] + b.String() + doc[j+len(docsEnd):]
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.t.Logf("wrote %s", file)
}
