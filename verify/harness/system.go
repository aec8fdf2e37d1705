package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// What the one-region Cluster and the two-region Regions share: their run
// directories, how a node is started and waited for, and the lease keys of its
// configuration.

// runDirs makes the run directory (dir, or a new temporary one named after prefix
// when dir is "") and the directory of the consensus stores' data: on tmpfs when
// the machine has one, so that a slow disk's fsyncs do not stall the stores (and
// fence every node) outside the faults the schedule plans; else the run directory.
func runDirs(dir, prefix string) (run, stores string, err error) {
	run = dir
	if run == "" {
		if run, err = os.MkdirTemp("", prefix+"-run-"); err != nil {
			return "", "", err
		}
	}
	stores = run
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", prefix+"-etcd-"); err == nil {
			stores = d
		}
	}
	return run, stores, nil
}

// removeRunDirs removes what runDirs made: the run directory when the harness
// made it (given "") and keep is false, the stores' directory when it is apart.
func removeRunDirs(given, run, stores string, keep bool) error {
	var errs []error
	if run != "" && given == "" && !keep {
		errs = append(errs, os.RemoveAll(run))
	}
	if stores != "" && stores != run {
		errs = append(errs, os.RemoveAll(stores))
	}
	return errors.Join(errs...)
}

// leaseKeys are the lease settings set (non-zero), as flow-mapping entries of a
// node's configuration (", ttl: 4s, window: 1s"); "" when none is, so that the
// node runs with flurry's defaults.
func leaseKeys(ttl, window, budget time.Duration) string {
	var b strings.Builder
	for _, kv := range []struct {
		key string
		d   time.Duration
	}{{"ttl", ttl}, {"window", window}, {"budget", budget}} {
		if kv.d > 0 {
			fmt.Fprintf(&b, ", %s: %s", kv.key, kv.d)
		}
	}
	return b.String()
}

// launch starts the node's process with a clock skew (FLURRY_CLOCK_SKEW; 0 for
// none) and logs it.
func (n *Node) launch(skew time.Duration, log *progress) error {
	n.Proc.Env = nil
	if skew != 0 {
		n.Proc.Env = []string{"FLURRY_CLOCK_SKEW=" + skew.String()}
	}
	if err := n.Proc.Start(); err != nil {
		return err
	}
	log.logf("node %s started (skew %s)", n.Name, skew)
	return nil
}

// waitReady waits until the node answers /readyz with 200, asking from host from,
// for at most d; it gives up at once when the node's process exits.
func (n *Node) waitReady(ctx context.Context, from *netns.Host, d time.Duration) error {
	hc := httpClient(from, time.Second)
	deadline := time.Now().Add(d)
	var last string
	for {
		if !n.Proc.Running() {
			return fmt.Errorf("node %s exited: %v (log %s)", n.Name, n.Proc.ExitErr(), n.Proc.Log)
		}
		resp, err := hc.Get(n.URL() + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = strings.TrimSpace(string(b))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("node %s not ready after %s: %s", n.Name, d, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// httpClient is an HTTP client whose connections start on host from.
func httpClient(from *netns.Host, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: from.DialContext, DisableKeepAlives: true}}
}

// hostAdder adds hosts to a network, keeping the first error: a system adds all of
// its hosts, then looks at err once.
type hostAdder struct {
	ctx context.Context
	net *netns.Net
	err error
}

// hosts adds n hosts named prefix1..prefixN (nil entries once an error occurred).
func (a *hostAdder) hosts(prefix string, n int) []*netns.Host {
	hs := make([]*netns.Host, n)
	for i := range hs {
		if a.err != nil {
			break
		}
		hs[i], a.err = a.net.AddHost(a.ctx, fmt.Sprintf("%s%d", prefix, i+1))
	}
	return hs
}
