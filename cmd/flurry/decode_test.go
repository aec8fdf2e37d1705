package main

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// Discord's developer documentation decodes this ID.
const discordID = `{"id":"175928847299117063","time":"2016-04-30T11:18:25.796Z","worker":1,"process":0,"seq":7,"unix_ms":"1462015105796","fields":[{"name":"worker","value":"1"},{"name":"process","value":"0"}],"sequence":"7"}`

func TestDecodeDiscord(t *testing.T) {
	r := cli(t, "", "decode", "--layout", "discord", "175928847299117063")
	if r.code != 0 || r.stderr != "" || r.stdout != discordID+"\n" {
		t.Errorf("decode = %+v, want stdout %s", r, discordID)
	}
	// The same from standard input, with blank lines and spaces around.
	r = cli(t, "\n  175928847299117063 \r\n\n175928847299117063", "decode", "--layout", "discord")
	if r.code != 0 || r.stderr != "" || r.stdout != discordID+"\n"+discordID+"\n" {
		t.Errorf("decode from stdin = %+v", r)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"not a number", []string{"decode", "--layout", "twitter", "12x"}, 1, []string{`decode "12x": invalid ID: "12x" is not a decimal number`}},
		{"negative", []string{"decode", "--layout", "twitter", "-5"}, 1, []string{`decode "-5": invalid ID: IDs are never negative`}},
		{"negative after --", []string{"decode", "--layout", "twitter", "--", "-5"}, 1, []string{`decode "-5": invalid ID: IDs are never negative`}},
		{"empty", []string{"decode", "--layout", "twitter", ""}, 1, []string{`decode "": invalid ID: empty`}},
		{"above int64", []string{"decode", "--layout", "twitter", "9223372036854775808"}, 1, []string{"above the int64 range"}},
		{"wider than the layout", []string{"decode", "--layout", "jssafe", "9007199254740992"}, 1, []string{`decode "9007199254740992"`, "not an ID of this 53-bit layout"}},
		{"newline in the ID", []string{"decode", "--layout", "twitter", "1\n2"}, 1, []string{`"1\n2"`}},
		{"bad layout", []string{"decode", "--layout", "nope", "1"}, 2, []string{`unknown preset "nope"`}},
		{"bad layout text", []string{"decode", "--layout", "time:41:1ms:2010-11-04T01:42:54.657Z,seq:40", "1"}, 2, []string{"layout: invalid", "remove 18"}},
		{"unknown flag", []string{"decode", "--layout", "twitter", "-x"}, 2, []string{"unknown shorthand flag"}},
		{"no layout", []string{"decode", "1"}, 2, []string{"decode needs the IDs' layout", "--layout", "twitter", "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16", "--server"}},
		{"no layout, stdin", []string{"decode"}, 2, []string{"decode needs the IDs' layout"}},
		{"both", []string{"decode", "--layout", "twitter", "--server", "http://127.0.0.1:1", "1"}, 2, []string{"--layout or --server, not both"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOneLineError(t, cli(t, "", tc.args...), tc.code, tc.want...)
		})
	}
}

// A bad ID does not stop decode: every good ID is printed, in order, each bad one is
// reported on its own line, and the exit code is 1.
func TestDecodeGoesOnAfterBadIDs(t *testing.T) {
	check := func(name string, r result) {
		t.Helper()
		if r.code != 1 {
			t.Errorf("%s: exit code %d, want 1", name, r.code)
		}
		out := lines(r.stdout)
		if len(out) != 2 || out[0] != discordID || !strings.HasPrefix(out[1], `{"id":"1","time":"2015-01-01T00:00:00.000Z"`) {
			t.Errorf("%s: stdout %q", name, r.stdout)
		}
		errs := lines(r.stderr)
		if len(errs) != 2 || !strings.Contains(errs[0], `"12x"`) || !strings.Contains(errs[1], `"zz"`) {
			t.Errorf("%s: stderr %q, want one line for 12x and one for zz", name, r.stderr)
		}
	}
	check("args", cli(t, "", "decode", "--layout", "discord", "175928847299117063", "12x", "1", "zz"))
	check("stdin", cli(t, "175928847299117063\n12x\n1\nzz\n", "decode", "--layout", "discord"))
}

func TestDecodeRoundTrip(t *testing.T) {
	l, _ := layout.Parse("gameserver")
	p := layout.Parts{Tick: 100000000000, Nodes: layout.NodeValues{5, 2000, 31}, Sequence: 63}
	id, err := l.Compose(p)
	if err != nil {
		t.Fatal(err)
	}
	r := cli(t, "", "decode", "--layout", "gameserver", id.String())
	if r.code != 0 {
		t.Fatalf("decode: %+v", r)
	}
	if want := `"platform":5,"area":2000,"app":31,"seq":63,`; !strings.Contains(r.stdout, want) {
		t.Errorf("decode = %s, want node fields in layout order then %s", r.stdout, want)
	}
	var d layout.Decoded
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.ID != id || d.Sequence != 63 || !d.Time.Equal(l.TickTime(p.Tick)) {
		t.Errorf("decode output %s reads back as %+v, %v", r.stdout, d, err)
	}
}

func FuzzDecodeArg(f *testing.F) {
	for _, s := range []string{
		"175928847299117063", "0", "1", "12x", "-5", "", " ", "\n", " 42 ", "+1", "1e5", "0x10",
		"9223372036854775807", "9223372036854775808", "99999999999999999999999", "１２３", "\xff", "1\n2", "\"",
	} {
		f.Add(s)
	}
	l, _ := layout.Parse("discord")
	f.Fuzz(func(t *testing.T, arg string) {
		r := cli(t, "", "decode", "--layout", "discord", "--", arg)
		switch r.code {
		case 0:
			if r.stderr != "" || len(lines(r.stdout)) != 1 || !strings.HasSuffix(r.stdout, "\n") {
				t.Fatalf("decode %q: success with stdout %q, stderr %q", arg, r.stdout, r.stderr)
			}
			var d layout.Decoded
			if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
				t.Fatalf("decode %q printed invalid JSON %q: %v", arg, r.stdout, err)
			}
			id, err := flurry.ParseID(strings.TrimSpace(arg))
			if err != nil || d.ID != id || !d.Time.Equal(l.TimeOf(id)) {
				t.Fatalf("decode %q printed %s (ParseID: %v, %v)", arg, r.stdout, id, err)
			}
		case 1:
			if r.stdout != "" || !strings.HasPrefix(r.stderr, "flurry: decode ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
				t.Fatalf("decode %q: failure with stdout %q, stderr %q", arg, r.stdout, r.stderr)
			}
		default:
			t.Fatalf("decode %q: exit code %d (stderr %q)", arg, r.code, r.stderr)
		}
	})
}

// TestDecodeKeysMatchServer: flurry decode's line carries the keys of the server's
// decode route (unix_ms, fields, sequence) with the same values, so a script reads
// either the same way; the layout's flat keys stay for the scripts that use them.
func TestDecodeKeysMatchServer(t *testing.T) {
	ts := startFlurryServer(t)
	r := cli(t, "", "get", "--server", ts.URL)
	if r.code != 0 {
		t.Fatalf("get --server: %+v", r)
	}
	id := strings.TrimSpace(r.stdout)
	resp, err := ts.Client().Get(ts.URL + "/v1/default/decode/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var route map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&route); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "", "decode", "--server", ts.URL, id)
	var line map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &line); r.code != 0 || err != nil {
		t.Fatalf("decode --server: %+v, %v", r, err)
	}
	for _, k := range []string{"id", "time", "unix_ms", "fields", "sequence"} {
		if route[k] == nil || fmt.Sprint(line[k]) != fmt.Sprint(route[k]) {
			t.Errorf("key %s: flurry decode %v, the server's route %v", k, line[k], route[k])
		}
	}
	if fmt.Sprint(line["seq"]) != route["sequence"] || line["worker"] == nil {
		t.Errorf("flurry decode lost its own keys: %s", r.stdout)
	}
	var d layout.Decoded
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.ID.String() != id || len(d.Nodes) != 1 {
		t.Errorf("flurry decode's line reads back as %+v, %v", d, err)
	}
	var fromRoute layout.Decoded
	b, _ := json.Marshal(route)
	if err := json.Unmarshal(b, &fromRoute); err != nil || fromRoute.ID != d.ID || fromRoute.Sequence != d.Sequence || fmt.Sprint(fromRoute.Nodes) != fmt.Sprint(d.Nodes) {
		t.Errorf("the route's JSON reads back as %+v, %v; want %+v", fromRoute, err, d)
	}
}

// TestDecodeDeadServer: decode --server to a server that does not answer says it
// could not reach it for the layout, not that no server could issue IDs (decode
// issues none).
func TestDecodeDeadServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	r := cli(t, "", "decode", "--server", dead, "--timeout", "2s", "5")
	wantOneLineError(t, r, 1, "could not reach "+dead+" for the layout of namespace \"default\"", "connection refused")
	if strings.Contains(r.stderr, "issue") {
		t.Errorf("decode --server to a dead server speaks of issuing IDs: %s", r.stderr)
	}
}
