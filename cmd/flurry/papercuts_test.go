package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestUnknownCommandWithHelp: "flurry nosuch --help" is an unknown command (exit
// 2), not the root's help with exit 0.
func TestUnknownCommandWithHelp(t *testing.T) {
	wantOneLineError(t, cli(t, "", "nosuch", "--help"), 2, `unknown command "nosuch"`)
	wantOneLineError(t, cli(t, "", "gne", "-h"), 2, `unknown command "gne"; did you mean "gen"?`)
	if r := cli(t, "", "gen", "--help"); r.code != 0 || !strings.Contains(r.stdout, "gen issues") {
		t.Errorf("gen --help: %+v", r)
	}
	if r := cli(t, "", "help", "gen"); r.code != 0 || !strings.Contains(r.stdout, "gen issues") {
		t.Errorf("help gen: %+v", r)
	}
	if r := cli(t, "", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Available Commands") {
		t.Errorf("--help: %+v", r)
	}
}

// TestLayoutSlips: a misspelt preset gets "did you mean", once, and a bad layout
// is a usage error (exit 2) for layouts as for gen.
func TestLayoutSlips(t *testing.T) {
	for _, args := range [][]string{{"gen", "--layout", "twiter"}, {"layouts", "twiter"}, {"decode", "--layout", "twiter", "1"}} {
		r := cli(t, "", args...)
		wantOneLineError(t, r, 2, `unknown preset "twiter"; did you mean twitter?`)
		if strings.Contains(r.stderr, "layout: layout") {
			t.Errorf("%v: %q says layout twice", args, r.stderr)
		}
	}
	wantOneLineError(t, cli(t, "", "layouts", "nope"), 2, `layouts: unknown preset "nope"`)
	// A plain date as the epoch, as flurry plan --epoch takes it.
	r := cli(t, "", "layouts", "time:41:1ms:2024-01-01,worker:10,seq:12")
	if r.code != 0 || !strings.Contains(r.stdout, "2024-01-01T00:00:00") {
		t.Errorf("date epoch: %+v", r)
	}
}

// TestStoreURLSlips: a directory where a store URL goes, and a tag created twice.
func TestStoreURLSlips(t *testing.T) {
	dir := t.TempDir()
	wantOneLineError(t, cli(t, "", "gen", "--lease", dir), 1, "is not a store URL; for a directory write file://"+filepath.ToSlash(dir))
	wantOneLineError(t, cli(t, "", "gen", "--segment", dir, "--tag", "a"), 1, "for a directory write file://"+filepath.ToSlash(dir))
	u := "file://" + filepath.ToSlash(dir)
	if r := cli(t, "", "segment", "create", u, "order"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	r := cli(t, "", "segment", "create", u, "order")
	wantOneLineError(t, r, 1, "segment create: tag order exists already in "+u+"; change its step with flurry segment set-step")
	if strings.Contains(r.stderr, "segment/") || strings.Contains(r.stderr, "segment: tag") {
		t.Errorf("prefixes repeated: %q", r.stderr)
	}
}

// TestUnreachablePostgres: a lease store that refuses connections is named once,
// with its address, not with pgx's message that repeats each attempt's dial error.
func TestUnreachablePostgres(t *testing.T) {
	testenv.NeedScheme(t, "postgres")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := cli(t, "", "gen", "--lease", "postgres://nope@"+addr+"/x")
	wantOneLineError(t, r, 1, "cannot reach PostgreSQL at "+addr+" (connection refused)")
	if strings.Count(r.stderr, addr) != 1 || strings.Contains(r.stderr, "dial") {
		t.Errorf("%q", r.stderr)
	}
}

// TestGenNearEnd: gen warns a year before its layout runs out, as the README
// promises of gameserver; far from the end, it does not.
func TestGenNearEnd(t *testing.T) {
	now := time.Now().UTC()
	// 2^35 ms is 397.7 days: from an epoch 300 days ago, about 98 days are left.
	near := fmt.Sprintf("time:35:1ms:%s,worker:4,seq:24", now.Add(-300*24*time.Hour).Format(time.RFC3339))
	r := cli(t, "", "gen", "--layout", near, "--node", "worker=1", "-n", "1")
	end := now.Add(-300 * 24 * time.Hour).Add((1 << 35) * time.Millisecond).Format("2006-01-02")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: layout "+near+" runs out on "+end+" (9") || !strings.Contains(r.stderr, " days left)") {
		t.Errorf("near the end: %+v", r)
	}
	far := fmt.Sprintf("time:36:1ms:%s,worker:4,seq:23", now.Add(-300*24*time.Hour).Format(time.RFC3339))
	if r := cli(t, "", "gen", "--layout", far, "--node", "worker=1", "-n", "1"); r.code != 0 || r.stderr != "" {
		t.Errorf("far from the end: %+v", r)
	}
}

// TestDecodeFromServer: decode --server takes the layout of the server's
// namespace, and prints what the server's own decode route says of the ID.
func TestDecodeFromServer(t *testing.T) {
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	p := startServe(t, bin, c, "http", nil, "--data", t.TempDir())
	_, _, body := fetch(t, c, "GET", p.base+"/v1/default/next?format=text")
	id := strings.TrimSpace(body)
	_, _, dec := fetch(t, c, "GET", p.base+"/v1/default/decode/"+id)
	r := cli(t, "", "decode", "--server", p.base, id)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("decode --server: %+v", r)
	}
	// {"id":"...","time":"2026-...Z","worker":0,"seq":0} against the route's
	// {"time":"2026-...Z",...,"fields":[{"name":"worker","value":"0"}],"sequence":"0"}.
	var route struct{ Time string }
	if err := json.Unmarshal([]byte(dec), &route); err != nil || route.Time == "" {
		t.Fatalf("the server's decode: %q", dec)
	}
	if !strings.Contains(r.stdout, `"id":"`+id+`","time":"`+route.Time+`"`) || !strings.Contains(r.stdout, `"worker":`) {
		t.Errorf("decode --server printed %q; the server decodes %s", r.stdout, dec)
	}
	wantOneLineError(t, cli(t, "", "decode", "--server", p.base, "--namespace", "segment", id), 1, `namespace "segment" is a segment namespace`)
}

var (
	docCurlDecode = regexp.MustCompile("(?m)^\\$ curl http://127\\.0\\.0\\.1:8080(/v1/[a-z]+/decode/\\d+)\n(.+)$")
	docCLIDecode  = regexp.MustCompile("(?m)^\\$ flurry decode --server http://127\\.0\\.0\\.1:8080 ([\\d ]+)\n((?:\\{.*\\}\n)+)")
)

// TestDocsDecodeExamples: what docs/server.md shows the server's decode route and
// flurry decode --server print for an ID is what they print, run against the
// default configuration (decoding depends on the ID and the layout alone).
func TestDocsDecodeExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "server.md"))
	if err != nil {
		t.Fatal(err)
	}
	curls, clis := docCurlDecode.FindAllStringSubmatch(string(doc), -1), docCLIDecode.FindAllStringSubmatch(string(doc), -1)
	if len(curls) == 0 || len(clis) == 0 {
		t.Fatalf("docs/server.md has %d curl and %d flurry decode examples; want both", len(curls), len(clis))
	}
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	p := startServe(t, bin, c, "http", nil, "--data", t.TempDir())
	for _, m := range curls {
		// protojson varies its spacing from build to build on purpose: compare the
		// JSON values.
		_, _, body := fetch(t, c, "GET", p.base+m[1])
		var doc, got any
		if err := json.Unmarshal([]byte(m[2]), &doc); err != nil {
			t.Fatalf("docs/server.md: curl %s shows no JSON: %v", m[1], err)
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || !reflect.DeepEqual(doc, got) {
			t.Errorf("docs/server.md: curl %s shows\n  %s\nthe server prints\n  %s", m[1], m[2], strings.TrimSpace(body))
		}
	}
	for _, m := range clis {
		r := cli(t, "", append([]string{"decode", "--server", p.base}, strings.Fields(m[1])...)...)
		if r.code != 0 || r.stdout != m[2] {
			t.Errorf("docs/server.md: flurry decode %s shows\n%sflurry prints\n%s%s", m[1], m[2], r.stdout, r.stderr)
		}
	}
}

// TestGameserverNearEnd: docs/layouts.md's claim about the gameserver preset (its end
// date, a warning a year ahead) is what gen does, on a clock moved to 200 days
// before that end.
func TestGameserverNearEnd(t *testing.T) {
	l, err := layout.Lookup("gameserver")
	if err != nil {
		t.Fatal(err)
	}
	end := l.Lifetime().UTC().Format(time.DateOnly)
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "layouts.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| " + end + " |", "(" + end + " for\n  the game server", "warns a year ahead"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("docs/layouts.md lacks %q (the gameserver preset runs out on %s)", want, end)
		}
	}
	t.Setenv(skewEnv, (time.Until(l.Lifetime()) - 200*24*time.Hour).Round(time.Second).String())
	r := cli(t, "", "gen", "--layout", "gameserver", "--node", "platform=1", "-n", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: layout gameserver runs out on "+end+" (") || !strings.Contains(r.stderr, " days left)") {
		t.Errorf("gen --layout gameserver 200 days before its end: %+v", r)
	}
}
