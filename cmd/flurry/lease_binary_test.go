package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// testLeaseProcesses runs gen --lease in several OS processes on one file store at
// once: four of one pool, one of them killed with SIGKILL mid-run and restarted, and
// a fixed value taken over by a process whose clock is 3 s behind. No ID may appear
// twice, each process's IDs must increase, and the skewed process must issue only
// above the IDs of the value's earlier holder.
func testLeaseProcesses(t *testing.T, ctx context.Context, bin, store, scope string) {
	dir := t.TempDir()
	pool := []string{"gen", "--lease", store, "--scope", scope, "--layout", "twitter", "--node", "datacenter=1", "--ttl", "2s", "-n", "300000"}
	fixed := []string{"gen", "--lease", store, "--scope", scope, "--layout", "twitter", "--node", "datacenter=1", "--ttl", "2s", "--window", "1s", "--fixed", "5", "-n", "1000"}
	l, _ := layout.Lookup("twitter")

	type proc struct {
		name   string
		cmd    *exec.Cmd
		out    string // file of its IDs
		stderr bytes.Buffer
	}
	start := func(name string, env []string, args []string) *proc {
		p := &proc{name: name, out: filepath.Join(dir, name+".ids")}
		f, err := os.Create(p.out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() // the child has its own descriptor
		p.cmd = exec.CommandContext(ctx, bin, args...)
		p.cmd.Env = append(os.Environ(), env...)
		p.cmd.Stdout, p.cmd.Stderr = f, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wait := func(p *proc) {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("%s: %v; stderr:\n%s", p.name, err, p.stderr.String())
		}
	}

	// An earlier holder of the fixed value 5 runs to completion and leaves its mark.
	first := start("fixed-first", nil, fixed)
	wait(first)

	// The pool processes, the one to be killed, and the skewed taker of value 5.
	var procs []*proc
	for i := range 3 {
		procs = append(procs, start(fmt.Sprintf("pool-%d", i), nil, pool))
	}
	skewed := start("fixed-skewed", []string{skewEnv + "=-3s"}, fixed)

	// The victim writes into a pipe, so it is certainly mid-run when killed: it
	// blocks once the pipe is full until the test reads on.
	victim := exec.CommandContext(ctx, bin, pool...)
	var victimErr bytes.Buffer
	victim.Stderr = &victimErr
	pipe, err := victim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	var victimOut bytes.Buffer
	br := bufio.NewReader(pipe)
	for i := 0; i < 50000; i++ {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("victim after %d lines: %v; stderr %s", i, err, victimErr.String())
		}
		victimOut.WriteString(line)
	}
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br) // what it wrote before it died
	victimOut.Write(rest)
	victim.Wait()
	victimFile := filepath.Join(dir, "victim.ids")
	if err := os.WriteFile(victimFile, victimOut.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Restarted at once: the killed holder's value stays held until its lease
	// expires, so the restart gets another value, or the same one above its mark.
	restarted := start("restarted", nil, pool)
	procs = append(procs, restarted, skewed)

	for _, p := range procs {
		wait(p)
	}
	t.Logf("fixed-first: %s", first.stderr.String())
	t.Logf("victim: %s", victimErr.String())
	for _, p := range procs {
		t.Logf("%s: %s", p.name, p.stderr.String())
	}

	// Every process's IDs strictly increase; no ID appears twice anywhere.
	seen := make(map[flurry.ID]string, 1_300_000)
	idsOf := map[string][]flurry.ID{}
	check := func(name, file string, partial bool) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if partial { // the victim died mid-line, perhaps
			s = s[:strings.LastIndexByte(s, '\n')+1]
		}
		ls := lines(s)
		var prev flurry.ID
		for i, line := range ls {
			id, err := flurry.ParseID(line)
			if err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
			if p, _ := l.Decompose(id); p.Nodes[0] != 1 {
				t.Fatalf("%s: ID %d has datacenter %d", name, id, p.Nodes[0])
			}
			if i > 0 && id <= prev {
				t.Fatalf("%s line %d: %d is not above %d", name, i+1, id, prev)
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %d issued by %s and by %s", id, other, name)
			}
			seen[id] = name
			prev = id
			idsOf[name] = append(idsOf[name], id)
		}
	}
	check("fixed-first", first.out, false)
	check("victim", victimFile, true)
	for _, p := range procs {
		check(p.name, p.out, false)
	}
	for _, p := range procs {
		want := 300000
		if strings.HasPrefix(p.name, "fixed") {
			want = 1000
		}
		if got := len(idsOf[p.name]); got != want {
			t.Errorf("%s printed %d IDs, want %d", p.name, got, want)
		}
	}
	if n := len(idsOf["victim"]); n < 50000 {
		t.Errorf("victim: %d IDs, want at least the 50000 read", n)
	}

	// The skewed process announced its clock, paused while its clock stood behind
	// the first holder's mark, and issued only above the first holder's IDs.
	firstIDs, skewedIDs := idsOf["fixed-first"], idsOf["fixed-skewed"]
	if skewedIDs[0] <= firstIDs[len(firstIDs)-1] {
		t.Errorf("the skewed process issued %d, not above the earlier holder's last ID %d", skewedIDs[0], firstIDs[len(firstIDs)-1])
	}
	if p, _ := l.Decompose(skewedIDs[0]); p.Nodes != (layout.NodeValues{1, 5}) {
		t.Errorf("skewed process's node %v, want datacenter=1,worker=5", p.Nodes)
	}
	se := skewed.stderr.String()
	if !strings.Contains(se, "flurry: WARNING: FLURRY_CLOCK_SKEW=-3s: this process's clock is shifted by -3s FOR TESTING") ||
		!strings.Contains(se, "; issuing above its mark ") ||
		!strings.Contains(se, "flurry: gen: paused: snowflake: clock moved backwards") || strings.Count(se, "paused") != 1 {
		t.Errorf("skewed process's stderr:\n%s", se)
	}

	// A restart on the killed holder's value starts above the killed holder's IDs.
	value := func(stderr string) string {
		m := regexp.MustCompile(`leased node value (\d+) `).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("no leased value in %q", stderr)
		}
		return m[1]
	}
	if vv, rv := value(victimErr.String()), value(restarted.stderr.String()); vv == rv {
		v, r := idsOf["victim"], idsOf["restarted"]
		if r[0] <= v[len(v)-1] {
			t.Errorf("the restart took value %s and issued %d, not above the killed holder's %d", rv, r[0], v[len(v)-1])
		}
	}

	// Every lease was released but perhaps the killed one's, and all have marks.
	out, err := exec.CommandContext(ctx, bin, "lease", "list", "--json", "--scope", scope+"/datacenter=1", store).Output()
	if err != nil {
		t.Fatalf("lease list: %v", err)
	}
	var rows []leaseListRow
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	victimValue := value(victimErr.String())
	for _, r := range rows {
		if r.MarkMs == 0 || r.Held && (r.Scope != scope+"/datacenter=1" || strconv.FormatInt(r.Value, 10) != victimValue) {
			t.Errorf("after the runs: %+v", r)
		}
	}
	if len(rows) < 5 || len(rows) > 7 { // 4 or 5 pool values (the restart may take a new one) and fixed 5
		t.Errorf("lease list: %d records: %+v", len(rows), rows)
	}
}
