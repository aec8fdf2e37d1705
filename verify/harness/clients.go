package harness

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// clientHost is what one client host runs in a schedule: the raw HTTP workload
// and, unless the load has no Go clients, the Go-client workload (fhclient -mode
// client), both named after the host.
type clientHost struct {
	name string
	host *netns.Host
	seed uint64
	ns   []string
	// raw are the nodes (name=URL) the raw requests go to; goNodes those the Go
	// clients have as servers, the first local of them their own region's (0:
	// every one is: one region).
	raw, goNodes []string
	local        int
}

// newProc makes a process of the system on host h (Cluster.proc, Regions.proc).
type newProc func(name string, h *netns.Host, args ...string) *Proc

// startClients starts every client host's workloads under the load ld for total
// (and ten minutes more, for the faults' repairs: the run stops them), the op logs
// in dir, and returns the op logs to read when they are stopped. client is the
// fhclient binary.
func startClients(hosts []clientHost, ld Load, total time.Duration, client, dir string, proc newProc) ([]opFile, error) {
	var files []opFile
	for _, c := range hosts {
		common := []string{"-name", c.name, "-seed", fmt.Sprint(c.seed), "-ns", strings.Join(c.ns, ","),
			"-duration", (total + 10*time.Minute).String()}
		out := filepath.Join(dir, "ops-"+c.name+".tsv")
		p := proc("client-"+c.name, c.host, append(append([]string{client, "-nodes", strings.Join(c.raw, ",")}, common...),
			"-workers", fmt.Sprint(ld.Workers), "-count", fmt.Sprint(ld.Count), "-timeout", ld.Timeout.String(),
			"-max-requests", fmt.Sprint(ld.MaxRequests), "-rate", fmt.Sprint(ld.Rate), "-out", out)...)
		files = append(files, opFile{out, false, p})
		if ld.Clients > 0 {
			out := filepath.Join(dir, "ops-"+c.name+"-go.tsv")
			args := []string{client, "-mode", "client", "-nodes", strings.Join(c.goNodes, ",")}
			if c.local > 0 {
				args = append(args, "-local", fmt.Sprint(c.local))
			}
			p := proc("client-"+c.name+"-go", c.host, append(append(args, common...),
				"-clients", fmt.Sprint(ld.Clients), "-workers", fmt.Sprint(ld.Callers), "-timeout", ld.CallTimeout.String(),
				"-max-requests", fmt.Sprint(ld.MaxCalls), "-rate", fmt.Sprint(ld.CallRate), "-out", out)...)
			files = append(files, opFile{out, true, p})
		}
	}
	for _, f := range files {
		if err := f.proc.Start(); err != nil {
			return files, err
		}
	}
	return files, nil
}

// nodeList is the nodes as fhclient's -nodes takes them: name=URL.
func nodeList(nodes []*Node) []string {
	var l []string
	for _, n := range nodes {
		l = append(l, n.Name+"="+n.URL())
	}
	return l
}
