package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestBinary builds the flurry command and runs it as separate processes: a reader
// that leaves early, two generators side by side, Ctrl-C, and leased node values.
func TestBinary(t *testing.T) {
	bin := testenv.BuildFlurry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	t.Run("reader leaves early", func(t *testing.T) {
		// As flurry gen -n 2000000 ... | head -n 5: the process must end by itself,
		// with status 0 and nothing on stderr, once the pipe is closed.
		cmd := exec.CommandContext(ctx, bin, "gen", "-n", "2000000", "--layout", "twitter", "--node", "worker=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for i := 0; i < 5; i++ {
			if !sc.Scan() {
				t.Fatalf("line %d: %v", i+1, sc.Err())
			}
			if _, err := flurry.ParseID(sc.Text()); err != nil {
				t.Errorf("line %d: %v", i+1, err)
			}
		}
		stdout.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("gen after the reader left: %v (stderr %q)", err, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("stderr %q, want nothing", stderr.String())
		}
	})

	t.Run("two processes", func(t *testing.T) {
		const n = 200000
		var outs [2]bytes.Buffer
		var cmds [2]*exec.Cmd
		for i := range cmds {
			cmds[i] = exec.CommandContext(ctx, bin, "gen", "-n", "200000", "--layout", "twitter", "--node", []string{"worker=1", "worker=2"}[i])
			cmds[i].Stdout = &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		seen := make(map[flurry.ID]bool, 2*n)
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("process %d: %v", i, err)
			}
			for _, id := range parseIDs(t, outs[i].String(), n) {
				if seen[id] {
					t.Fatalf("ID %d issued twice", id)
				}
				seen[id] = true
			}
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no SIGINT")
		}
		cmd := exec.CommandContext(ctx, bin, "gen", "-n", "1e15", "--node", "worker=3")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once output flows, the signal handler is installed.
		br := bufio.NewReader(stdout)
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		var last string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if line != "" {
					t.Errorf("output ends in a partial line %q", line)
				}
				break
			}
			last = line
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("interrupted gen: %v, want exit status 130", err)
		}
		// A run this long (the layout's cap makes it years) says so first.
		if s := stderr.String(); !strings.HasPrefix(s, "flurry: gen: 1,000,000,000,000,000 IDs at the layout's cap of 4,096,000 IDs/s take about ") ||
			!strings.Contains(s, "\nflurry: gen: interrupted after ") || strings.Count(s, "\n") != 2 {
			t.Errorf("stderr %q", s)
		}
		if _, err := flurry.ParseID(strings.TrimSpace(last)); last != "" && err != nil {
			t.Errorf("last line %q: %v", last, err)
		}
	})

	// The same run of processes on each kind of store: a scope of its own each time,
	// since the databases keep their rows between test runs.
	scope := fmt.Sprintf("proc-test-%d", time.Now().UnixNano())
	for _, tc := range []struct {
		name string
		url  func(t testing.TB) string
	}{
		{"file", func(t testing.TB) string { return "file://" + t.TempDir() }},
		{"postgres", testenv.Postgres.URL},
		{"redis", testenv.Redis.URL},
	} {
		t.Run("lease processes/"+tc.name, func(t *testing.T) {
			testenv.NeedScheme(t, tc.name)
			testLeaseProcesses(t, ctx, bin, tc.url(t), scope)
		})
	}
}
