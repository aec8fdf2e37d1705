package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/engines"
)

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_flurry flurry",
		"zsh":        "#compdef flurry",
		"fish":       "complete -c flurry",
		"powershell": "Register-ArgumentCompleter",
	} {
		r := cli(t, "", "completion", shell)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, want) {
			t.Errorf("completion %s: code %d, stderr %q, stdout lacks %q", shell, r.code, r.stderr, want)
		}
	}
	wantOneLineError(t, cli(t, "", "completion", "tcsh"), 2, `unknown shell "tcsh"`)
	wantOneLineError(t, cli(t, "", "completion"), 2, "completion takes one shell")

	// The scripts call back into flurry (__complete): commands and flags complete.
	r := cli(t, "", "__complete", "ge")
	if r.code != 0 || !strings.Contains(r.stdout, "gen\t") || !strings.Contains(r.stdout, "get\t") {
		t.Errorf("__complete ge: %+v", r)
	}
	r = cli(t, "", "__complete", "gen", "--lay")
	if r.code != 0 || !strings.Contains(r.stdout, "--layout\t") {
		t.Errorf("__complete gen --lay: %+v", r)
	}
	r = cli(t, "", "__complete", "completion", "")
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if !strings.Contains(r.stdout, sh+"\n") {
			t.Errorf("__complete completion: %q lacks %s", r.stdout, sh)
		}
	}
}

func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	r := cli(t, "", "man", dir)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("man: %+v", r)
	}
	written := lines(r.stdout)
	for _, name := range []string{"flurry", "flurry-gen", "flurry-redis-set-node", "flurry-redis-get-node", "flurry-segment-list", "flurry-completion", "flurry-serve"} {
		path := filepath.Join(dir, name+".1")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (wrote %q)", name, err, written)
			continue
		}
		page := string(b)
		for _, want := range []string{".TH \"" + strings.ToUpper(name) + "\" 1 ", ".SH NAME\n" + strings.ReplaceAll(name, "-", "\\-") + " \\- ", ".SH SYNOPSIS", ".SH DESCRIPTION"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	gen, _ := os.ReadFile(filepath.Join(dir, "flurry-gen.1"))
	for _, want := range []string{".B \\-n, \\-\\-count count", "\\-\\-layout string", "Default: twitter.", ".SH EXAMPLES", ".BR flurry (1)"} {
		if !strings.Contains(string(gen), want) {
			t.Errorf("flurry-gen.1 lacks %q", want)
		}
	}
	for _, p := range written {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("printed %s: %v", p, err)
		}
	}
	wantOneLineError(t, cli(t, "", "man"), 2, "man takes the directory")

	// groff, when installed, reads every page without a warning (-ww: all of them).
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Logf("no groff; pages not rendered: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range written {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, groff, "-man", "-Tutf8", "-ww", "-z", p)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff %s: %v\n%s", filepath.Base(p), err, stderr.String())
		}
	}
}

func TestLayoutAndNodeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "--layout", "bogus"}, `--layout: unknown preset "bogus"`},
		{[]string{"decode", "--layout", "bogus", "5"}, `--layout: unknown preset "bogus"`},
		{[]string{"redis", "get-node", "redis://127.0.0.1:1/0", "--layout", "time:41:1ms"}, "--layout: "},
		{[]string{"gen", "--node", "bogus"}, `--node "bogus": the layout has 2 node fields; give them as name=value, e.g. datacenter=0,worker=0`},
		{[]string{"gen", "--node", "5"}, "give them as name=value"},
		{[]string{"gen", "--node", "rack=1"}, `--node: invalid: the layout has no node field "rack"`},
		{[]string{"gen", "--node", "worker=32"}, "--node: "},
		{[]string{"gen", "--layout", "sonyflake", "--node", "x"}, `--node: node value "x" is not a whole number`},
		{[]string{"gen", "--layout", "mastodon", "--node", "1"}, "has no node field"},
		{[]string{"gen", "--layout", "sonyflake", "--node", "70000"}, "--node: "},
	} {
		if tc.args[0] == "redis" && !engines.Has(engines.LeaseStore, "redis") {
			continue // the lean build's redis command refuses before it reads flags
		}
		wantOneLineError(t, cli(t, "", tc.args...), 2, tc.want)
	}

	// A layout with one node field takes a plain number, as redis set-node does.
	r := cli(t, "", "gen", "--layout", "sonyflake", "--node", "42", "-n", "3")
	if r.code != 0 || r.stderr != "" || len(lines(r.stdout)) != 3 {
		t.Fatalf("gen --layout sonyflake --node 42: %+v", r)
	}
	d := cli(t, r.stdout, "decode", "--layout", "sonyflake")
	if d.code != 0 || strings.Count(d.stdout, `"machine":42`) != 3 {
		t.Errorf("decoded %q, want machine 42 three times (%+v)", d.stdout, d)
	}
	named := cli(t, "", "gen", "--layout", "sonyflake", "--node", "machine=42", "-n", "1")
	if named.code != 0 {
		t.Errorf("--node machine=42: %+v", named)
	}
}

// TestREADMEPerUserPaths: the commands of the README and of docs/cli.md write under
// the user's home (~/.local/state/flurry), not /var/lib or /tmp, so a reader can
// paste them as themselves and the files do not vanish or collide with another
// user's.
func TestREADMEPerUserPaths(t *testing.T) {
	for _, page := range []string{"README.md", "docs/cli.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", page))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "./flurry ") && !strings.HasPrefix(line, "flurry ") && !strings.HasPrefix(line, "go run ./cmd/flurry ") {
				continue
			}
			n++
			for _, shared := range []string{"/var/lib/", "/tmp/", "/etc/"} {
				if strings.Contains(line, shared) {
					t.Errorf("%s:%d writes under %s: %s", page, i+1, shared, line)
				}
			}
		}
		if n == 0 {
			t.Errorf("no flurry command found in %s", page)
		}
	}
}
