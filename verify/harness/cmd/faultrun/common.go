package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/flurryid/flurry/verify/harness"
)

// What both schedules' runs share: the load, the builds, the replay command's
// lease flags, the report's files and the verdict.

// load is the clients' work the command line asks for.
func load(o opts) harness.Load {
	clients := o.clients
	if clients == 0 {
		clients = -1 // Load's zero is the default
	}
	return harness.Load{Workers: o.workers, Count: o.count, Timeout: 2 * time.Second, MaxRequests: o.maxReq, Rate: o.rate,
		Clients: clients, CallRate: o.callRate}
}

// binaries builds flurry (unless -flurry names one) and the harness's commands
// (cmds: their names under verify/harness/cmd) into a new temporary directory,
// which the returned function removes. It returns the binaries' paths, flurry's
// first.
func binaries(ctx context.Context, o opts, tmpPrefix string, cmds ...string) ([]string, func(), error) {
	bin, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(bin) }
	paths := []string{filepath.Join(bin, "flurry")}
	builds := [][2]string{{paths[0], "./cmd/flurry"}}
	for _, c := range cmds {
		paths = append(paths, filepath.Join(bin, c))
		builds = append(builds, [2]string{paths[len(paths)-1], "./verify/harness/cmd/" + c})
	}
	if o.prebuilt != "" {
		if paths[0], err = filepath.Abs(o.prebuilt); err != nil {
			cleanup()
			return nil, nil, err
		}
		builds = builds[1:]
	}
	for _, b := range builds {
		if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "flurry_full", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("go build %s (run from the repository's root): %v\n%s", b[1], err, out)
		}
	}
	return paths, cleanup, nil
}

// leaseFlags are the replay command's lease flags: those the run set.
func leaseFlags(o opts) string {
	var s string
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ttl", o.ttl}, {"window", o.window}, {"budget", o.budget}} {
		if d.v != 0 {
			s += fmt.Sprintf(" -%s %s", d.name, d.v)
		}
	}
	return s
}

// writeReport writes <dir>/<name>.md (by report) and <dir>/<name>.png (the plot
// of out).
func writeReport(dir, name string, report func(io.Writer) error, out *harness.Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		ext   string
		write func(io.Writer) error
	}{{".md", report}, {".png", func(w io.Writer) error { return harness.WritePlot(w, out) }}} {
		fh, err := os.Create(filepath.Join(dir, name+f.ext))
		if err != nil {
			return err
		}
		if err := f.write(fh); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	return nil
}

// verdict prints the run's problems and the faults the harness could not apply,
// and fails the run when there is one of them or an anomaly.
func verdict(out *harness.Outcome, cmd string) error {
	bad := !out.Result.OK() || len(out.Problems) > 0
	for _, pr := range out.Problems {
		fmt.Println("faultrun:", pr)
	}
	for _, fr := range out.Faults {
		if fr.Err != nil {
			fmt.Printf("faultrun: fault %q: %v\n", fr.Fault.Name, fr.Err)
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("the run found problems; replay with: %s", cmd)
	}
	return nil
}
