package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// This file is a minimal client of the W3C WebDriver HTTP protocol, enough to drive
// headless Chromium through chromedriver like a user: open a page, find elements
// by CSS selector, click, type, read text and take screenshots. It needs no Go
// dependency.

const (
	chromiumBin     = "/usr/bin/chromium"
	chromedriverBin = "/usr/bin/chromedriver"
	elementKey      = "element-6066-11e4-a52e-4f735466cecf" // W3C web element reference
)

// browser is one WebDriver session of a chromedriver the test started.
type browser struct {
	t    testing.TB
	base string // http://127.0.0.1:port of chromedriver
	sid  string
	hc   *http.Client
}

// lookBrowser returns the chromium and chromedriver binaries, or skips (fails with
// FLURRY_TEST_REQUIRE=1) naming the Debian packages to install.
func lookBrowser(t testing.TB) (chromium, driver string) {
	t.Helper()
	chromium, driver = chromiumBin, chromedriverBin
	if p := os.Getenv("FLURRY_TEST_CHROMIUM"); p != "" {
		chromium = p
	}
	if p := os.Getenv("FLURRY_TEST_CHROMEDRIVER"); p != "" {
		driver = p
	}
	for _, p := range []string{chromium, driver} {
		if _, err := exec.LookPath(p); err != nil {
			msg := fmt.Sprintf("%s not installed (Debian: apt-get install chromium chromium-driver: %v); the browser test needs it", p, err)
			if testenv.Required() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return chromium, driver
}

// startBrowser starts chromedriver on a free port and opens a session of headless
// Chromium with the given window size. Both end with the test.
func startBrowser(t testing.TB, ctx context.Context, width, height int) *browser {
	t.Helper()
	chromium, driver := lookBrowser(t)
	port := testenv.FreePort(t)
	var log bytes.Buffer
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting chromedriver: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromedriver output:\n%s", log.String())
		}
	})
	b := &browser{t: t, base: "http://127.0.0.1:" + strconv.Itoa(port), hc: &http.Client{Timeout: 20 * time.Second}}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var st struct {
			Ready bool `json:"ready"`
		}
		if err := b.do("GET", "/status", nil, &st); err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver on port %d not ready after 10 s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}

	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":       "chrome",
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			// Without the background-networking flags Chromium reaches out to Google
			// services, and on a machine without internet its own connections are
			// then refused.
			"args": []string{
				"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-dev-shm-usage", "--hide-scrollbars", "--force-color-profile=srgb",
				"--user-data-dir=" + t.TempDir(),
				fmt.Sprintf("--window-size=%d,%d", width, height),
			},
		},
	}}}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.do("POST", "/session", caps, &sess); err != nil {
		t.Fatalf("new WebDriver session: %v", err)
	}
	b.sid = sess.SessionID
	t.Cleanup(func() { b.do("DELETE", "/session/"+b.sid, nil, nil) })
	return b
}

// do sends one WebDriver command and decodes the "value" of its answer into out.
func (b *browser) do(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		j, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d %q", method, path, res.StatusCode, raw)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		json.Unmarshal(env.Value, &e)
		msg, _, _ := strings.Cut(e.Message, "\n") // drop chromedriver's stack trace
		return fmt.Errorf("%s %s: %s: %s", method, path, e.Error, msg)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

// cmd runs a command of the session and fails the test on error.
func (b *browser) cmd(method, path string, in, out any) {
	b.t.Helper()
	if err := b.do(method, "/session/"+b.sid+path, in, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.cmd("POST", "/url", map[string]string{"url": url}, nil)
}

// find returns the first element that matches a CSS selector, or "" when none does.
func (b *browser) find(css string) string {
	b.t.Helper()
	var ref map[string]string
	err := b.do("POST", "/session/"+b.sid+"/element", map[string]string{"using": "css selector", "value": css}, &ref)
	if err != nil {
		if strings.Contains(err.Error(), "no such element") {
			return ""
		}
		b.t.Fatal(err)
	}
	return ref[elementKey]
}

// must is find that fails the test when nothing matches.
func (b *browser) must(css string) string {
	b.t.Helper()
	id := b.find(css)
	if id == "" {
		b.t.Fatalf("no element %s on the page", css)
	}
	return id
}

// text is the rendered text of the element a selector names ("" if hidden).
func (b *browser) text(css string) string {
	b.t.Helper()
	var s string
	b.cmd("GET", "/element/"+b.must(css)+"/text", nil, &s)
	return s
}

// prop is a DOM property of the element (value of an input, for example).
func (b *browser) prop(css, name string) string {
	b.t.Helper()
	var v any
	b.cmd("GET", "/element/"+b.must(css)+"/property/"+name, nil, &v)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// dataset is the data-* attributes of the element a selector names (nil if none).
func (b *browser) dataset(css string) map[string]string {
	b.t.Helper()
	var m map[string]string
	b.script(`const e = document.querySelector(arguments[0]); return e ? Object.assign({}, e.dataset) : null`, &m, css)
	return m
}

// count is how many elements a selector names.
func (b *browser) count(css string) int {
	b.t.Helper()
	var n int
	b.script(`return document.querySelectorAll(arguments[0]).length`, &n, css)
	return n
}

func (b *browser) displayed(css string) bool {
	b.t.Helper()
	id := b.find(css)
	if id == "" {
		return false
	}
	var v bool
	b.cmd("GET", "/element/"+id+"/displayed", nil, &v)
	return v
}

func (b *browser) click(css string) {
	b.t.Helper()
	b.cmd("POST", "/element/"+b.must(css)+"/click", map[string]any{}, nil)
}

// typeInto clears a field and types text into it; "\ue007" is the Enter key.
func (b *browser) typeInto(css, text string) {
	b.t.Helper()
	id := b.must(css)
	b.cmd("POST", "/element/"+id+"/clear", map[string]any{}, nil)
	b.cmd("POST", "/element/"+id+"/value", map[string]string{"text": text}, nil)
}

// script runs JavaScript in the page and decodes its return value into out.
func (b *browser) script(js string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.cmd("POST", "/execute/sync", map[string]any{"script": js, "args": args}, out)
}

// resize makes the page's viewport width x height CSS pixels: the window is that
// much larger than the viewport, as it has a frame even when headless.
func (b *browser) resize(width, height int) {
	b.t.Helper()
	var in, out struct{ W, H int }
	b.script(`return {W: window.innerWidth, H: window.innerHeight}`, &in)
	b.cmd("GET", "/window/rect", nil, &struct{ Width, Height *int }{&out.W, &out.H})
	b.cmd("POST", "/window/rect", map[string]int{"width": width + out.W - in.W, "height": height + out.H - in.H}, nil)
	b.waitFor(2*time.Second, func() string {
		b.script(`return {W: window.innerWidth, H: window.innerHeight}`, &in)
		if in.W != width || in.H != height {
			return fmt.Sprintf("viewport %dx%d, want %dx%d", in.W, in.H, width, height)
		}
		return ""
	})
}

// screenshot returns a PNG of the viewport.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	var s string
	b.cmd("GET", "/screenshot", nil, &s)
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

// waitFor polls cond every 50 ms until it returns "" (done) or the timeout passes,
// then fails with the last thing cond said it was waiting for.
func (b *browser) waitFor(timeout time.Duration, cond func() string) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("after %v: %s", timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
