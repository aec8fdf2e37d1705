package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/netns"
)

// The two-region system: two groups of hosts on one bridge, every packet from one
// group to the other held for RegionsOptions.Delay (the NFQUEUE delay of package
// netns, on each host, to the other group's addresses only), traffic inside a group
// undelayed. Each region has its own 3-member etcd cluster and three flurry nodes
// serving NSRegion: a snowflake namespace whose layout has a datacenter field, fixed
// per region (node: datacenter=N), and a worker field leased from the region's own
// etcd. A client host in each region runs flurry's Go client with its region's
// three servers first and the other region's after them (fhclient -local 3), and
// raw HTTP requests to its region's nodes only.

// NSRegion is the namespace the two-region nodes serve.
const NSRegion = "sfd"

// RegionLayout is NSRegion's layout: 2 datacenter bits (the region), 4 worker bits
// (leased in the region), 16 sequence bits.
const RegionLayout = "time:41:1ms:2025-01-01T00:00:00Z,datacenter:2,worker:4,seq:16"

// DefaultRegionDelay is the one-way delay between the regions: 60 ms round trip.
const DefaultRegionDelay = 30 * time.Millisecond

// RegionsOptions configure a two-region system. Zero values are documented per
// field.
type RegionsOptions struct {
	// Prefix of every namespace. Default "fhrg".
	Prefix string
	// Dir holds data, configurations, logs and op files. Default: a new temporary
	// directory, removed by Close unless KeepDir.
	Dir     string
	KeepDir bool
	// Flurry and Client are the flurry and fhclient binaries. Required.
	Flurry, Client string
	// LeaseTTL, Window and Budget are NSRegion's lease settings; zero leaves the
	// key out (flurry's defaults).
	LeaseTTL, Window, Budget time.Duration
	// Delay is the one-way delay of every packet between the regions. Default
	// DefaultRegionDelay.
	Delay time.Duration
	// Datacenters are the datacenter values of regions a and b. Zero means 1 and
	// 2. Two regions given the same value issue the same IDs (their workers are
	// leased from different stores): the run's self-test sets that to show the
	// checker sees it.
	Datacenters [2]int
	// LeaseFrom names, per region, the region whose etcd its nodes lease from.
	// Zero means each its own. A region leasing from the other's store depends
	// on the link between them: the self-test of the cut check sets that.
	LeaseFrom [2]string
	// FixedWorkers, when set, has the n-th node of each region (an1 and bn1 for
	// n = 1) lease worker value n-1 (lease fixed: n-1) rather than a value the
	// store's pool picks: with
	// Datacenters {1, 1}, every node of region a then shares its whole node value
	// with one node of region b, where pooled values coincide in about half the
	// starts (three values of sixteen drawn in each region).
	FixedWorkers bool
	// Log receives progress lines. Default: discarded.
	Log io.Writer
}

// Region is one group of hosts: its etcd members, its flurry nodes, its client host.
type Region struct {
	// Name is "a" or "b"; hosts are named after it (ae1, an1, ac1).
	Name       string
	Datacenter int
	EtcdHosts  []*netns.Host
	NodeHosts  []*netns.Host
	ClientHost *netns.Host
	Etcd       []*Proc
	Nodes      []*Node
	leaseFrom  *Region
}

// Hosts returns every host of the region.
func (r *Region) Hosts() []*netns.Host {
	hs := append(append([]*netns.Host{}, r.EtcdHosts...), r.NodeHosts...)
	return append(hs, r.ClientHost)
}

// EtcdEndpoints is the region's etcd client endpoint list.
func (r *Region) EtcdEndpoints() string {
	var s []string
	for _, h := range r.EtcdHosts {
		s = append(s, hostPort(h, EtcdPort))
	}
	return strings.Join(s, ",")
}

// Regions is the running two-region system.
type Regions struct {
	opt     RegionsOptions
	Net     *netns.Net
	Dir     string
	etcdDir string
	// Regions are a and b.
	Regions [2]*Region
	// RTT is the shortest TCP connect time measured from region a's client host to
	// region b's first node after the start: the round trip between the regions.
	RTT time.Duration

	delays []*netns.Delay
	procs  procs
	progress
}

// Budget is the outage budget NSRegion runs with.
func (s *Regions) Budget() time.Duration {
	if s.opt.Budget > 0 {
		return s.opt.Budget
	}
	return DefaultBudget
}

// TTL is the lease TTL NSRegion runs with.
func (s *Regions) TTL() time.Duration { return LeaseTTL(s.opt.LeaseTTL, s.opt.Budget) }

// Other is the region that is not r.
func (s *Regions) Other(r *Region) *Region {
	if r == s.Regions[0] {
		return s.Regions[1]
	}
	return s.Regions[0]
}

// Region returns the region named name (a or b), or nil.
func (s *Regions) Region(name string) *Region {
	for _, r := range s.Regions {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// StartRegions builds the two regions' network with the delay between them, starts
// each region's etcd and flurry nodes and waits until every node is ready. On error
// everything started is torn down.
func StartRegions(ctx context.Context, o RegionsOptions) (s *Regions, err error) {
	if o.Prefix == "" {
		o.Prefix = "fhrg"
	}
	if o.Delay == 0 {
		o.Delay = DefaultRegionDelay
	}
	if o.Datacenters == [2]int{} {
		o.Datacenters = [2]int{1, 2}
	}
	if o.Flurry == "" || o.Client == "" {
		return nil, errors.New("harness: RegionsOptions.Flurry and .Client (binaries) are required")
	}
	if err := netns.Check(ctx); err != nil {
		return nil, err
	}
	for _, tool := range []string{"etcd", "etcdctl", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("harness: %s not found; run verify/harness/setup.sh", tool)
		}
	}
	s = &Regions{opt: o, progress: progress{w: o.Log}}
	defer func() {
		if err != nil {
			_ = s.Close()
			s = nil
		}
	}()
	if s.Dir, s.etcdDir, err = runDirs(o.Dir, "fhrg"); err != nil {
		return s, err
	}
	s.logf("run directory %s", s.Dir)
	if s.Net, err = netns.New(ctx, netns.Options{Prefix: o.Prefix}); err != nil {
		return s, err
	}
	ha := &hostAdder{ctx: ctx, net: s.Net}
	for i, name := range []string{"a", "b"} {
		s.Regions[i] = &Region{Name: name, Datacenter: o.Datacenters[i],
			EtcdHosts: ha.hosts(name+"e", 3), NodeHosts: ha.hosts(name+"n", 3), ClientHost: ha.hosts(name+"c", 1)[0]}
	}
	if err = ha.err; err != nil {
		return s, err
	}
	for i, r := range s.Regions {
		r.leaseFrom = r
		if f := s.Region(o.LeaseFrom[i]); f != nil {
			r.leaseFrom = f
		}
	}
	// The long-distance link: each host holds what it sends to the other region.
	for _, r := range s.Regions {
		var peers []netip.Addr
		for _, h := range s.Other(r).Hosts() {
			peers = append(peers, h.Addr)
		}
		for _, h := range r.Hosts() {
			dl, err := h.StartDelayTo(ctx, 11, o.Delay, peers...)
			if err != nil {
				return s, err
			}
			s.delays = append(s.delays, dl)
		}
	}
	s.logf("network %s: two regions of %d hosts, %s each way between them", o.Prefix, len(s.Regions[0].Hosts()), o.Delay)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range s.Regions {
		wg.Go(func() { errs[i] = s.startEtcd(ctx, r) })
	}
	wg.Wait()
	if err = errors.Join(errs...); err != nil {
		return s, err
	}
	for i, r := range s.Regions {
		wg.Go(func() { errs[i] = s.startNodes(ctx, r) })
	}
	wg.Wait()
	if err = errors.Join(errs...); err != nil {
		return s, err
	}
	s.RTT = s.measureRTT(ctx)
	s.logf("round trip between the regions (TCP connect): %s", s.RTT.Round(time.Millisecond))
	return s, nil
}

// Close kills every program, stops the delays, deletes the namespaces and (unless
// KeepDir) the run directory. It is safe to call more than once.
func (s *Regions) Close() error {
	var errs []error
	errs = append(errs, s.procs.killAll())
	for _, dl := range s.delays {
		errs = append(errs, dl.Stop(context.Background()))
	}
	s.delays = nil
	if s.Net != nil {
		errs = append(errs, s.Net.Close(context.Background()))
	}
	errs = append(errs, removeRunDirs(s.opt.Dir, s.Dir, s.etcdDir, s.opt.KeepDir))
	return errors.Join(errs...)
}

func (s *Regions) proc(name string, h *netns.Host, args ...string) *Proc {
	return s.procs.add(&Proc{Name: name, Host: h, Args: args, Log: filepath.Join(s.Dir, name+".log")})
}

// startEtcd starts region r's 3-member etcd cluster and waits until every member
// accepts connections.
func (s *Regions) startEtcd(ctx context.Context, r *Region) error {
	var initial []string
	for i, h := range r.EtcdHosts {
		initial = append(initial, fmt.Sprintf("%se%d=http://%s", r.Name, i+1, hostPort(h, EtcdPeerPort)))
	}
	for i, h := range r.EtcdHosts {
		name := fmt.Sprintf("%se%d", r.Name, i+1)
		p := s.proc("etcd-"+name, h, "etcd",
			"--name", name, "--data-dir", filepath.Join(s.etcdDir, "etcd-"+name),
			"--listen-client-urls", "http://"+hostPort(h, EtcdPort),
			"--advertise-client-urls", "http://"+hostPort(h, EtcdPort),
			"--listen-peer-urls", "http://"+hostPort(h, EtcdPeerPort),
			"--initial-advertise-peer-urls", "http://"+hostPort(h, EtcdPeerPort),
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", "fhrg-etcd-"+r.Name,
			"--logger", "zap", "--log-level", "warn")
		r.Etcd = append(r.Etcd, p)
		if err := p.Start(); err != nil {
			return err
		}
	}
	for _, h := range r.EtcdHosts {
		if err := waitTCP(ctx, r.ClientHost, hostPort(h, EtcdPort), 30*time.Second); err != nil {
			return fmt.Errorf("etcd of region %s: %w", r.Name, err)
		}
	}
	if err := waitEtcdHealthy(ctx, r, 30*time.Second); err != nil {
		return err
	}
	s.logf("etcd of region %s: 3 members, healthy", r.Name)
	return nil
}

// waitEtcdHealthy waits until every member of region r's etcd serves a
// linearizable read, so a leader is elected: a member that accepts connections
// may not answer yet (a loaded machine takes seconds to elect), and a node's
// first lease request gives up after its dial timeout.
func waitEtcdHealthy(ctx context.Context, r *Region, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		out, err := r.ClientHost.Run(ctx, "etcdctl", "--endpoints", r.EtcdEndpoints(),
			"--dial-timeout", "1s", "--command-timeout", "2s", "endpoint", "health")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd of region %s not healthy after %v: %v\n%s", r.Name, within, err, out)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// restartEtcd starts region r's etcd members again on their data.
func (s *Regions) restartEtcd(ctx context.Context, r *Region) error {
	for _, p := range r.Etcd {
		for i, a := range p.Args {
			if a == "--initial-cluster-state" {
				p.Args[i+1] = "existing"
			}
		}
		if err := p.Start(); err != nil {
			return err
		}
	}
	for _, h := range r.EtcdHosts {
		if err := waitTCP(ctx, r.ClientHost, hostPort(h, EtcdPort), 30*time.Second); err != nil {
			return fmt.Errorf("etcd of region %s: %w", r.Name, err)
		}
	}
	return waitEtcdHealthy(ctx, r, 30*time.Second)
}

// nodeConfig is the configuration of node i (from 0) of region r on host h: NSRegion
// with the region's datacenter value and the worker leased from the region's etcd
// (value i with RegionsOptions.FixedWorkers; under a
// key prefix of the region's own, so that a region leasing from the other's etcd,
// RegionsOptions.LeaseFrom, still has a pool of its own).
func (s *Regions) nodeConfig(r *Region, i int, h *netns.Host, data string) string {
	keys := leaseKeys(s.opt.LeaseTTL, s.opt.Window, s.opt.Budget)
	if s.opt.FixedWorkers {
		keys += fmt.Sprintf(", fixed: %d", i)
	}
	return fmt.Sprintf(`listen: %s
data_dir: %s
max_count: 100000
shutdown_timeout: 5s
namespaces:
  %s:
    strategy: snowflake
    snowflake:
      layout: "%s"
      node: datacenter=%d
      lease: {store: "etcd://%s/fh-%s?dial_timeout=2s"%s}
`, hostPort(h, FlurryPort), data, NSRegion, RegionLayout, r.Datacenter, r.leaseFrom.EtcdEndpoints(), r.Name, keys)
}

// startNodes writes region r's node configurations and starts its nodes one by one.
func (s *Regions) startNodes(ctx context.Context, r *Region) error {
	for i, h := range r.NodeHosts {
		name := fmt.Sprintf("%sn%d", r.Name, i+1)
		data := filepath.Join(s.Dir, "data-"+name)
		cfg := filepath.Join(s.Dir, name+".yaml")
		if err := os.WriteFile(cfg, []byte(s.nodeConfig(r, i, h, data)), 0o644); err != nil {
			return err
		}
		n := &Node{Name: name, Host: h, Config: cfg, Data: data}
		n.Proc = s.proc(name, h, s.opt.Flurry, "serve", "--config", cfg)
		n.Proc.Stamp = true
		r.Nodes = append(r.Nodes, n)
	}
	for _, n := range r.Nodes {
		if err := n.launch(0, &s.progress); err != nil {
			return err
		}
		if err := n.waitReady(ctx, r.ClientHost, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// measureRTT is the shortest of ten TCP connects from region a's client host to
// region b's first node.
func (s *Regions) measureRTT(ctx context.Context) time.Duration {
	a, b := s.Regions[0], s.Regions[1]
	best := time.Duration(0)
	for range 10 {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		t0 := time.Now()
		conn, err := a.ClientHost.DialContext(cctx, "tcp", hostPort(b.NodeHosts[0], FlurryPort))
		d := time.Since(t0)
		cancel()
		if err != nil {
			continue
		}
		conn.Close()
		if best == 0 || d < best {
			best = d
		}
	}
	return best
}

// RegionNamespaces is the checker's description of NSRegion: one namespace for
// both regions, so that duplicates are looked for across them.
func RegionNamespaces() []checker.Namespace {
	l, err := layout.Parse(RegionLayout)
	if err != nil {
		panic(err) // a constant
	}
	// A region restarted 30 s behind issues above its earlier IDs (behind:
	// logical), so ahead of its clock: allow a minute.
	return []checker.Namespace{{Name: NSRegion, Kind: checker.Snowflake, Layout: l, MaxAhead: time.Minute}}
}
