package dashboard_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/server/dashboard"
	"github.com/flurryid/flurry/verify/testenv"
)

var update = flag.Bool("update", false, "write the browser test's 1280x800 screenshot to docs/dashboard.png")

// serverConfig has the namespaces of the embedded default plus "private", which
// needs the token testToken.
const serverConfig = `namespaces:
  default:
    strategy: snowflake
  segment:
    strategy: segment
    segment:
      create:
        step: 1000
  private:
    strategy: snowflake
    tokens: ["` + testToken + `"]
`

const testToken = "dashboard-test-token-0123456789"

// flurryServe is a `flurry serve` process the test can stop and start again on the
// same port and data directory.
type flurryServe struct {
	t    testing.TB
	bin  string
	addr string
	data string
	// config is the configuration file: the embedded default's namespaces and
	// one that needs a token.
	config string
	cmd    *exec.Cmd
	log    *bytes.Buffer
}

// buildFlurry builds the flurry command once for the package's tests
// (testenv.BuildFlurry).
func buildFlurry(t testing.TB, _ context.Context) string {
	t.Helper()
	return testenv.BuildFlurry(t)
}

func (s *flurryServe) start() {
	s.t.Helper()
	s.log = new(bytes.Buffer)
	s.cmd = exec.Command(s.bin, "serve", "--config", s.config, "--listen", s.addr, "--data", s.data)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("flurry serve: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get("http://" + s.addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			s.t.Fatalf("flurry serve not healthy after 10 s: %v\n%s", err, s.log)
		}
	}
}

// stop ends the server gracefully (SIGTERM: it hands its lease back), as an
// operator's restart does.
func (s *flurryServe) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// call is one IDService call over Connect's JSON protocol, as the page makes it.
func call(t testing.TB, base, method string, in, out proto.Message) {
	t.Helper()
	body, err := protojson.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(base+"/flurry.v1.IDService/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", method, res.StatusCode, b)
	}
	if err := protojson.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
}

// grouped writes an integer as the page does: digits in groups of three.
func grouped(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// TestBrowser runs `flurry serve` and uses the dashboard in headless Chromium as a
// person would: it waits for the default namespace's state, reads it, issues IDs
// with the button, decodes one with the keyboard, checks what the page shows
// against the server's own Decode, survives the server going away and coming
// back, and takes screenshots at 1280x800 and at phone width.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a browser; run: go test -tags flurry_full -run TestBrowser ./server/dashboard/")
	}
	lookBrowser(t) // skip before building anything
	// Generous for a cold build on a busy machine; the browser part takes seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()

	data := t.TempDir()
	config := filepath.Join(data, "flurry.yaml")
	if err := os.WriteFile(config, []byte(serverConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := &flurryServe{t: t, bin: buildFlurry(t, ctx), addr: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t)), data: data, config: config}
	srv.start()
	t.Cleanup(srv.stop)
	t.Logf("built and started flurry serve in %v", time.Since(began).Round(time.Millisecond))
	base := "http://" + srv.addr
	api := base
	if !servesDashboard(t, base) {
		t.Fatalf("flurry serve does not answer / with the dashboard (server.Server must mount dashboard.Handler())")
	}

	lap := time.Now()
	phase := func(what string) {
		t.Logf("%-40s %v", what, time.Since(lap).Round(time.Millisecond))
		lap = time.Now()
	}
	b := startBrowser(t, ctx, 1280, 800)
	phase("browser started")
	b.navigate(base + "/")
	b.resize(1280, 800)
	shots := t.TempDir()
	if d := os.Getenv("FLURRY_TEST_SCREENSHOTS"); d != "" {
		shots = d // keep them for a person (or CI artefacts) to look at
	}
	save := func(name string, png []byte) {
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Error(err)
		}
	}
	if got := b.text("h1"); got != "flurry" {
		t.Errorf("heading %q", got)
	}

	// 1. The default namespace's state shows up and matches Info.
	card := "#ns-default"
	b.waitFor(5*time.Second, func() string {
		if !b.displayed(card + " .ready") {
			return "no card for the default namespace"
		}
		if s := b.text(card + " .ready"); s != "ready" {
			return "default namespace shows " + strconv.Quote(s)
		}
		return ""
	})
	var info flurryv1.InfoResponse
	call(t, api, "Info", &flurryv1.InfoRequest{Namespace: "default"}, &info)
	ni := info.Namespaces[0]
	dd := func(sec, key string) string { return b.text(card + " ." + sec + "-sec dd[data-key=" + key + "]") }
	if got := b.text(card + " .strategy"); got != ni.Strategy {
		t.Errorf("strategy %q, Info says %q", got, ni.Strategy)
	}
	if got := dd("layout", "layout"); got != ni.Layout.Text {
		t.Errorf("layout %q, Info says %q", got, ni.Layout.Text)
	}
	if got, want := dd("layout", "node"), fmt.Sprintf("%s=%d", ni.Layout.Node[0].Name, ni.Layout.Node[0].Value); got != want {
		t.Errorf("node %q, Info says %q", got, want)
	}
	if got := dd("lease", "state"); got != ni.Lease.State {
		t.Errorf("lease state %q, Info says %q", got, ni.Lease.State)
	}
	if got := dd("lease", "value"); got != grouped(ni.Lease.Value) {
		t.Errorf("lease value %q, Info says %d", got, ni.Lease.Value)
	}
	if got := dd("lease", "scope"); got != ni.Lease.Scope {
		t.Errorf("lease scope %q, Info says %q", got, ni.Lease.Scope)
	}
	if got := dd("lease", "mark-age"); !strings.HasSuffix(got, " ago") && !strings.HasPrefix(got, "reserved ") {
		t.Errorf("mark age %q", got)
	}
	if got := b.text(card + " .life"); !strings.Contains(got, " y ") {
		t.Errorf("life left %q, want years (Info: %d s)", got, ni.Layout.LifeLeftSeconds)
	}
	t.Logf("default namespace on the page: %s, issued %s, rate %s, life left %s, lease %s value %s, mark %s",
		b.text(card+" .strategy"), b.text(card+" .issued"), b.text(card+" .rate"), b.text(card+" .life"),
		dd("lease", "state"), dd("lease", "value"), dd("lease", "mark-age"))
	if b.displayed("#ns-segment") {
		if got := b.text("#ns-segment .segment-sec dd[data-key=tag]"); got == "" {
			t.Error("segment namespace shows no tag")
		}
	}

	// Every form control has a label.
	var unlabelled []string
	b.script(`return Array.from(document.querySelectorAll('input, select, textarea'))
		.filter(e => e.labels.length === 0).map(e => e.id)`, &unlabelled)
	if len(unlabelled) > 0 {
		t.Errorf("form controls without a label: %v", unlabelled)
	}

	phase("state read")
	// 2. Next IDs with the button.
	b.typeInto("#next-count", "5")
	b.click("#next-btn")
	var ids []string
	b.waitFor(5*time.Second, func() string {
		v := strings.TrimSpace(b.prop("#next-ids", "value"))
		if ids = strings.Fields(v); len(ids) != 5 {
			return fmt.Sprintf("IDs box holds %q; status %q", v, b.text("#next-status"))
		}
		return ""
	})
	prev := new(big.Int)
	for i, s := range ids {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok || v.Cmp(prev) <= 0 {
			t.Errorf("ID %d %q is not a decimal above the one before", i, s)
		}
		prev = v
	}
	if got := b.text("#next-status"); !strings.HasPrefix(got, "5 IDs from default") {
		t.Errorf("Next status %q", got)
	}
	b.click("#next-copy")
	b.waitFor(2*time.Second, func() string {
		// Headless Chromium may refuse the clipboard; then the IDs are selected
		// for Ctrl+C.
		if got := b.text("#next-status"); got != "Copied to the clipboard." && got != "Selected: press Ctrl+C to copy." {
			return "Copy says " + strconv.Quote(got)
		}
		return ""
	})
	t.Logf("Copy: %s", b.text("#next-status"))
	// The issued counter and the rate follow on the next polls.
	b.waitFor(5*time.Second, func() string {
		if n, _ := strconv.ParseInt(strings.ReplaceAll(b.text(card+" .issued"), ",", ""), 10, 64); n < 5 {
			return "issued shows " + b.text(card+" .issued")
		}
		if !strings.HasSuffix(b.text(card+" .rate"), "/s") {
			return "rate shows " + b.text(card+" .rate")
		}
		return ""
	})

	// The chart: the 5 IDs came between two polls, so the rate series has a point
	// above zero; the runway series has the lease's window (the mark ahead of now).
	rateSVG, runwaySVG := card+" .rate-plot svg", card+" .runway-plot svg"
	b.waitFor(5*time.Second, func() string {
		if !b.displayed(card + " .chart") {
			return "no chart for the default namespace"
		}
		if peak, _ := strconv.ParseFloat(b.dataset(rateSVG)["peak"], 64); !(peak > 0) {
			return fmt.Sprintf("the rate chart shows no point above 0: %v", b.dataset(rateSVG))
		}
		if _, err := strconv.ParseFloat(b.dataset(runwaySVG)["last"], 64); err != nil {
			return fmt.Sprintf("the runway chart shows no value: %v", b.dataset(runwaySVG))
		}
		return ""
	})
	if got := b.text(card + " .runway-panel .chart-title"); got != "Runway: lease window" {
		t.Errorf("runway chart title %q", got)
	}
	if n := b.count(card + " .rate-plot path.line, " + card + " .rate-plot circle.dot"); n == 0 {
		t.Error("the rate chart draws no line or point")
	}
	for _, sel := range []string{rateSVG, runwaySVG} {
		var labels []string
		b.script(`return Array.from(document.querySelectorAll(arguments[0] + ' text')).map(e => e.textContent)`, &labels, sel)
		if !slices.Contains(labels, "now") || !slices.ContainsFunc(labels, func(s string) bool { return strings.HasSuffix(s, "/s") || strings.HasSuffix(s, " s") }) {
			t.Errorf("%s axis labels %q: want \"now\" and values with units", sel, labels)
		}
	}
	t.Logf("default namespace's chart: rate %s (%v); runway %s (%v)",
		b.text(card+" .rate-panel .chart-now"), b.dataset(rateSVG), b.text(card+" .runway-panel .chart-now"), b.dataset(runwaySVG))

	phase("next IDs issued")
	// 3. A bad ID: one line of error, inline.
	b.typeInto("#decode-id", "not-an-id\ue007")
	b.waitFor(5*time.Second, func() string {
		if cls := b.prop("#decode-status", "className"); !strings.Contains(cls, "error") {
			return "no error shown for a bad ID; status " + strconv.Quote(b.text("#decode-status"))
		}
		return ""
	})
	if msg := b.text("#decode-status"); strings.Contains(msg, "\n") || msg == "" {
		t.Errorf("decode error %q, want one line", msg)
	} else {
		t.Logf("decode error shown: %s", msg)
	}
	if b.displayed("#decode-out") {
		t.Error("decode result still shown after an error")
	}

	phase("bad ID decoded")
	// 4. Paste an issued ID into the decode box and press Enter.
	id := ids[2]
	b.typeInto("#decode-id", id+"\ue007")
	b.waitFor(5*time.Second, func() string {
		if !b.displayed("#decode-out dd[data-key=time]") {
			return "no decoded time; status " + strconv.Quote(b.text("#decode-status"))
		}
		return ""
	})
	var dec flurryv1.DecodeResponse
	call(t, api, "Decode", &flurryv1.DecodeRequest{Namespace: "default", Id: id}, &dec)
	out := func(key string) string { return b.text("#decode-out dd[data-key=" + key + "]") }
	if got := out("id"); got != id {
		t.Errorf("decoded ID %q, want %q", got, id)
	}
	if got := out("time"); got != dec.Time {
		t.Errorf("decoded time %q, server says %q", got, dec.Time)
	}
	if got := out("unix-ms"); got != grouped(dec.UnixMs) {
		t.Errorf("decoded Unix ms %q, server says %d", got, dec.UnixMs)
	}
	for _, f := range dec.Fields {
		if got := out(f.Name); got != grouped(f.Value) {
			t.Errorf("decoded %s %q, server says %d", f.Name, got, f.Value)
		}
	}
	if got := out("sequence"); got != grouped(dec.Sequence) {
		t.Errorf("decoded sequence %q, server says %d", got, dec.Sequence)
	}
	if ts, err := time.Parse(time.RFC3339, dec.Time); err != nil || time.Since(ts) > time.Minute || time.Until(ts) > time.Second {
		t.Errorf("decoded time %q is not about now (%v)", dec.Time, err)
	}
	t.Logf("decoded %s on the page: time %s, fields %d, sequence %s", id, out("time"), len(dec.Fields), out("sequence"))

	// No script errors or CSP violations in the console.
	checkConsole(t, b)

	phase("ID decoded")
	// 5. Screenshot at 1280x800.
	shot := b.screenshot()
	checkPNG(t, shot, 1280, 800)
	save("dashboard.png", shot)
	if *update {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "dashboard.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	phase("screenshot")

	// 6. A namespace with a token: an anonymous caller is not told it exists
	// (docs/security.md: Info leaves out namespaces the caller may not see, names
	// included), so the page has no card and no Next choice for it until the token is
	// entered, which the tab keeps across a reload; after Forget it is gone again.
	private := "#ns-private"
	if b.displayed(private) || b.displayed(private+" .chart") || b.displayed("#next-ns option[value=private]") {
		t.Errorf("namespace private (or its chart) is shown to a caller without its token")
	}
	if b.displayed("#ns-default .token-pill") {
		t.Error("namespace default has a token mark")
	}
	b.typeInto("#token", testToken)
	b.waitFor(5*time.Second, func() string {
		if !b.displayed(private + " .layout-sec") {
			return "namespace private not shown after the token was entered"
		}
		return ""
	})
	if !b.displayed(private + " .token-pill") {
		t.Error("namespace private has no token mark")
	}
	b.waitFor(5*time.Second, func() string {
		if !b.displayed(private + " .chart") {
			return "namespace private has no chart with its token"
		}
		return ""
	})
	b.click("#next-ns option[value=private]")
	b.click("#next-btn")
	b.waitFor(5*time.Second, func() string {
		if got := b.text("#next-status"); !strings.HasPrefix(got, "5 IDs from private") {
			return "Next with the token says " + strconv.Quote(got)
		}
		return ""
	})
	b.navigate(base + "/")
	if got := b.prop("#token", "value"); got != testToken {
		t.Errorf("token field after a reload %q, want the token kept in sessionStorage", got)
	}
	b.waitFor(5*time.Second, func() string {
		if !b.displayed(private + " .layout-sec") {
			return "namespace private locked after a reload"
		}
		return ""
	})
	b.click("#token-clear")
	var kept any
	b.script(`return sessionStorage.getItem('flurry.token')`, &kept)
	if kept != nil {
		t.Errorf("sessionStorage still holds %v after Forget", kept)
	}
	b.waitFor(5*time.Second, func() string {
		if b.displayed(private+" .layout-sec") || b.displayed(private+" .chart") {
			return "namespace private still shows its state or chart after Forget"
		}
		return ""
	})
	phase("token")
	// 7. The server goes away: a banner, the old state marked stale, retries; it
	// comes back on the same port: the banner goes.
	srv.stop()
	b.waitFor(5*time.Second, func() string {
		if !b.displayed("#banner") {
			return "no banner while the server is down"
		}
		return ""
	})
	banner := b.text("#banner")
	if !strings.Contains(banner, "Retrying") {
		t.Errorf("banner %q", banner)
	}
	t.Logf("banner while down: %s", banner)
	if !b.displayed(card + ".stale") {
		t.Error("state not marked stale while the server is down")
	}
	if got := b.text(card + " .ready"); got != "no contact" {
		t.Errorf("readiness while the server is down %q", got)
	}
	down := b.screenshot()
	save("dashboard-down.png", down)
	srv.start()
	b.waitFor(8*time.Second, func() string {
		if b.displayed("#banner") {
			return "banner still shown after the server came back: " + b.text("#banner")
		}
		if b.displayed(card + ".stale") {
			return "state still stale after the server came back"
		}
		return ""
	})

	// The charts show the outage as a gap: a shaded band, and the lease window's
	// line in two runs (before and after), not one line through it.
	b.waitFor(8*time.Second, func() string {
		ds := b.dataset(runwaySVG)
		if ds["gaps"] == "0" || ds["runs"] == "0" || ds["runs"] == "1" {
			return fmt.Sprintf("the runway chart after the server came back: %v, want a gap and two runs", ds)
		}
		return ""
	})
	if n := b.count(card + " .rate-plot rect.gap"); n == 0 {
		t.Error("the rate chart shows no gap for the outage")
	}
	// The segment namespace restarted on the range it handed back at the stop: its
	// step is still the tag's (it showed 0 after every graceful restart).
	if b.displayed("#ns-segment") {
		b.waitFor(5*time.Second, func() string {
			if got := b.text("#ns-segment .segment-sec dd[data-key=step]"); got != "1,000" {
				return "segment step after the restart " + strconv.Quote(got) + ", want 1,000"
			}
			return ""
		})
	}

	phase("server down and back")
	// 8. A narrow screen: one column, nothing wider than the viewport.
	b.resize(390, 844)
	b.waitFor(3*time.Second, func() string {
		var w struct{ Scroll, Inner float64 }
		b.script(`return {Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth}`, &w)
		if w.Inner > 500 {
			return fmt.Sprintf("viewport still %v wide", w.Inner)
		}
		if w.Scroll > w.Inner {
			return fmt.Sprintf("page is %v px wide in a %v px viewport", w.Scroll, w.Inner)
		}
		return ""
	})
	// The charts are redrawn to the narrow card's width.
	b.waitFor(3*time.Second, func() string {
		var w struct{ Box, View, Right, Inner float64 }
		b.script(`const s = document.querySelector(arguments[0]);
			return {Box: s.parentElement.clientWidth, View: s.viewBox.baseVal.width,
				Right: s.getBoundingClientRect().right, Inner: window.innerWidth}`, &w, rateSVG)
		if w.View != w.Box || w.Right > w.Inner {
			return fmt.Sprintf("rate chart drawn %v wide in a box %v wide, right edge at %v of %v", w.View, w.Box, w.Right, w.Inner)
		}
		return ""
	})
	save("dashboard-narrow.png", b.screenshot())
	// The dark colour scheme, for a person to look at.
	if err := b.do("POST", "/session/"+b.sid+"/goog/cdp/execute", map[string]any{
		"cmd":    "Emulation.setEmulatedMedia",
		"params": map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": "dark"}}},
	}, nil); err == nil {
		save("dashboard-narrow-dark.png", b.screenshot())
	}
	phase("narrow screen")
	t.Logf("screenshots in %s; %v in all", shots, time.Since(began).Round(time.Millisecond))
}

// servesDashboard tells whether the server answers / with the dashboard.
func servesDashboard(t testing.TB, base string) bool {
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode == 200 && res.Header.Get("Content-Security-Policy") == dashboard.CSP
}

// checkPNG checks that a screenshot is a PNG of the window's size with more than
// a blank page on it.
func checkPNG(t testing.TB, b []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if r := img.Bounds(); r.Dx() != w || r.Dy() != h {
		t.Errorf("screenshot %dx%d, want %dx%d", r.Dx(), r.Dy(), w, h)
	}
	colours := map[uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			colours[cr>>11<<10|cg>>11<<5|cb>>11] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot has %d colours: a blank page?", len(colours))
	}
}

// checkConsole fails on errors in the browser's console (script errors, refused
// requests, CSP violations). chromedriver keeps the log only when asked for it;
// without it the check is skipped.
func checkConsole(t testing.TB, b *browser) {
	t.Helper()
	var entries []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	if err := b.do("POST", "/session/"+b.sid+"/se/log", map[string]string{"type": "browser"}, &entries); err != nil {
		t.Logf("no browser log: %v", err)
		return
	}
	for _, e := range entries {
		// The deliberately bad ID above answers 400: the browser logs that.
		if e.Level == "SEVERE" && !strings.Contains(e.Message, "IDService/Decode") {
			t.Errorf("browser console: %s", e.Message)
		}
	}
}
