// Package harness runs flurry across hosts and breaks the network between them: a
// seeded nemesis schedules named faults (partitions, hanging or refusing stores,
// packet loss, an etcd leader killed, a ZooKeeper follower or leader killed, a
// Redis failover, flurry nodes killed, paused, restarted with a skewed clock,
// restarted one by one; and, as the operations nemesis, what operators do: data
// directories copied or restored, a second deployment, servers on private stores,
// a Leaf server that stopped writing its node) while client hosts ask three
// `flurry serve` nodes for IDs two ways, by raw HTTP requests and through flurry's Go
// client, and record every answer. Hosts are Linux network namespaces on a bridge
// (package netns); the stores are real etcd (3 members), Redis (primary, replica, 3
// sentinels), ZooKeeper (a 3-member ensemble) and PostgreSQL clusters of its own (a
// primary and a streaming standby).
// The nodes run with flurry's lease defaults unless Options set them. A fault may
// also run processes of its own (a takeover of a paused node's lease value) whose IDs
// are checked with the nodes', and every restarted node is probed for its first ID.
//
// A Scenario is a list of Faults, each with a name, a start and a duration; Run
// starts the cluster, runs the clients and the schedule, and returns what the clients
// saw with the fault windows, node restarts and their times to a first ID, for
// verify/checker and the report (WriteReport).
//
// The regions schedule (PlanRegions, RunRegions, WriteRegionsReport) runs on a
// system of its own, StartRegions: two regions of hosts apart by a delayed link,
// each with its own etcd, nodes and clients; its faults cut the regions apart, cut
// one region off, and take a region's store or nodes down.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flurryid/flurry/lease"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/verify/netns"
)

// Ports of the services on their hosts.
const (
	EtcdPort     = 2379
	EtcdPeerPort = 2380
	RedisPort    = 6379
	SentinelPort = 26379
	PGPort       = 5432
	FlurryPort   = 8080
	ZKPort       = 2181 // ZooKeeper's clients
	ZKPeerPort   = 2888 // followers to the leader
	ZKElectPort  = 3888 // leader election
)

// RedisMaster is the name the sentinels monitor the primary by.
const RedisMaster = "fhmaster"

// Options configure a Cluster. Zero values are documented per field.
type Options struct {
	// Prefix of every namespace. Default "fh".
	Prefix string
	// Dir holds data, configurations, logs and op files. Default: a new temporary
	// directory, removed by Close unless KeepDir.
	Dir     string
	KeepDir bool
	// Flurry and Client are the flurry and fhclient binaries. Required.
	Flurry, Client string
	// LeaseTTL, Window and Budget are the snowflake namespaces' lease settings
	// (snowflake.lease.ttl, .window, .budget). Zero leaves the key out, so that the
	// nodes run with flurry's defaults; set them for experiments. [LeaseTTL] gives
	// the TTL the nodes then run with.
	LeaseTTL, Window, Budget time.Duration
	// RedisURL chooses how flurry reaches Redis: "sentinel" (a redis+sentinel://
	// URL of the three sentinels: it follows a failover) or "primary" (redis:// to
	// the first primary: it does not). Default "primary".
	RedisURL string
	// Log receives progress lines. Default: discarded.
	Log io.Writer
	// Leaf is the stand-in Leaf server (fhleaf) the silent-leaf kind runs.
	// Default: none (that kind then fails to begin).
	Leaf string
}

// DefaultBudget is flurry's default outage budget of a snowflake namespace
// (snowflake.lease.budget): how long it keeps issuing through a lease store that
// does not answer.
const DefaultBudget = lease.DefaultBudget

// LeaseTTL returns the lease TTL a snowflake namespace runs with: ttl when set,
// else the TTL flurry derives from the outage budget (DefaultBudget when budget is
// zero), lease.TTLFor: 69 s for the default budget. Everything in the harness
// that outwaits a lease asks this function.
func LeaseTTL(ttl, budget time.Duration) time.Duration {
	if ttl > 0 {
		return ttl
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	return lease.TTLFor(budget, 0)
}

// TTL is the lease TTL the cluster's snowflake namespaces run with.
func (c *Cluster) TTL() time.Duration { return LeaseTTL(c.opt.LeaseTTL, c.opt.Budget) }

// Budget is the outage budget the cluster's snowflake namespaces run with.
func (c *Cluster) Budget() time.Duration {
	if c.opt.Budget > 0 {
		return c.opt.Budget
	}
	return DefaultBudget
}

// Cluster is the running system: the network, the stores, the flurry nodes.
type Cluster struct {
	opt Options
	Net *netns.Net
	Dir string
	// etcdDir holds the etcd and ZooKeeper members' data: on tmpfs when the
	// machine has one, so that a slow disk's fsyncs do not stall the cluster (and
	// fence every node) outside the faults the scenario schedules.
	etcdDir string

	Etcd      []*Proc // e1..e3
	Redis     []*Proc // r1 (first primary), r2 and r3 (first replicas)
	Sentinels []*Proc // on r1, r2, r3
	PG        []*Proc // pg1 (first primary), pg2 (first standby)
	ZK        []*Proc // z1..z3
	Nodes     []*Node

	EtcdHosts, RedisHosts, PGHosts, ZKHosts, NodeHosts, ClientHosts []*netns.Host
	// SpareHosts (s1, s2) run the operations nemesis's own processes: a copy of a
	// node, a second deployment, a stand-in Leaf server. The store faults treat
	// them as clients (they are not cut off the stores).
	SpareHosts []*netns.Host

	pgBin     string
	pgUser    *user.User
	pgPrimary int // under mu

	procs procs
	mu    sync.Mutex
	progress
}

// Node is one flurry serve process.
type Node struct {
	Name   string
	Proc   *Proc
	Host   *netns.Host
	Config string
	Data   string // its data directory
}

// URL is the node's base URL.
func (n *Node) URL() string {
	return "http://" + net.JoinHostPort(n.Host.Addr.String(), strconv.Itoa(FlurryPort))
}

// Start builds the network and starts every store and the three flurry nodes,
// waiting until each answers. On error everything started is torn down.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Prefix == "" {
		o.Prefix = "fh"
	}
	if o.RedisURL == "" {
		o.RedisURL = "primary"
	}
	if o.Flurry == "" || o.Client == "" {
		return nil, errors.New("harness: Options.Flurry and Options.Client (binaries) are required")
	}
	if err := netns.Check(ctx); err != nil {
		return nil, err
	}
	if err := Tools(); err != nil {
		return nil, err
	}
	pgBin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	c = &Cluster{opt: o, progress: progress{w: o.Log}}
	defer func() {
		if err != nil {
			_ = c.Close()
			c = nil
		}
	}()
	if c.Dir, c.etcdDir, err = runDirs(o.Dir, "fh"); err != nil {
		return c, err
	}
	// PostgreSQL's user must reach its data directory below Dir.
	if err := os.Chmod(c.Dir, 0o755); err != nil {
		return c, err
	}
	c.logf("run directory %s", c.Dir)
	if c.Net, err = netns.New(ctx, netns.Options{Prefix: o.Prefix}); err != nil {
		return c, err
	}
	ha := &hostAdder{ctx: ctx, net: c.Net}
	c.EtcdHosts = ha.hosts("e", 3)
	c.RedisHosts = ha.hosts("r", 3)
	c.PGHosts = ha.hosts("pg", 2)
	c.ZKHosts = ha.hosts("z", 3)
	c.NodeHosts = ha.hosts("n", 3)
	c.ClientHosts = ha.hosts("c", 2)
	c.SpareHosts = ha.hosts("s", 2)
	if err = ha.err; err != nil {
		return c, err
	}
	c.logf("network %s: %d hosts", o.Prefix, len(c.Net.Hosts()))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Add(4)
	go func() { defer wg.Done(); errs[0] = c.startEtcd(ctx) }()
	go func() { defer wg.Done(); errs[1] = c.startRedis(ctx) }()
	go func() { defer wg.Done(); errs[2] = c.startPG(ctx, pgBin) }()
	go func() { defer wg.Done(); errs[3] = c.startZK(ctx) }()
	wg.Wait()
	if err = errors.Join(errs...); err != nil {
		return c, err
	}
	if err = c.startNodes(ctx); err != nil {
		return c, err
	}
	return c, nil
}

// Close kills every program, deletes the namespaces and (unless KeepDir) the run
// directory. It is safe to call more than once.
func (c *Cluster) Close() error {
	var errs []error
	errs = append(errs, c.procs.killAll())
	if c.Net != nil {
		errs = append(errs, c.Net.Close(context.Background()))
	}
	errs = append(errs, removeRunDirs(c.opt.Dir, c.Dir, c.etcdDir, c.opt.KeepDir))
	return errors.Join(errs...)
}

func (c *Cluster) proc(name string, h *netns.Host, env []string, args ...string) *Proc {
	return c.procs.add(&Proc{Name: name, Host: h, Args: args, Env: env, Log: filepath.Join(c.Dir, name+".log")})
}

func hostPort(h *netns.Host, port int) string {
	return net.JoinHostPort(h.Addr.String(), strconv.Itoa(port))
}

// waitTCP waits until a TCP connection from host from to addr succeeds.
func waitTCP(ctx context.Context, from *netns.Host, addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := from.DialContext(cctx, "tcp", addr)
		cancel()
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not reachable from %s after %s: %w", addr, from.Name, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ---- etcd

// EtcdEndpoints is the client endpoint list, host:port,host:port,host:port.
func (c *Cluster) EtcdEndpoints() string {
	var s []string
	for _, h := range c.EtcdHosts {
		s = append(s, hostPort(h, EtcdPort))
	}
	return strings.Join(s, ",")
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	var initial []string
	for i, h := range c.EtcdHosts {
		initial = append(initial, fmt.Sprintf("e%d=http://%s", i+1, hostPort(h, EtcdPeerPort)))
	}
	for i, h := range c.EtcdHosts {
		name := fmt.Sprintf("e%d", i+1)
		p := c.proc("etcd-"+name, h, nil, "etcd",
			"--name", name, "--data-dir", filepath.Join(c.etcdDir, "etcd-"+name),
			"--listen-client-urls", "http://"+hostPort(h, EtcdPort),
			"--advertise-client-urls", "http://"+hostPort(h, EtcdPort),
			"--listen-peer-urls", "http://"+hostPort(h, EtcdPeerPort),
			"--initial-advertise-peer-urls", "http://"+hostPort(h, EtcdPeerPort),
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", "fh-etcd",
			"--logger", "zap", "--log-level", "warn")
		c.Etcd = append(c.Etcd, p)
		if err := p.Start(); err != nil {
			return err
		}
	}
	for _, h := range c.EtcdHosts {
		if err := waitTCP(ctx, c.ClientHosts[0], hostPort(h, EtcdPort), 30*time.Second); err != nil {
			return fmt.Errorf("etcd: %w", err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader, err := c.EtcdLeader(ctx)
		if err == nil && leader >= 0 {
			c.logf("etcd: 3 members, leader e%d", leader+1)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd: no leader after 30s: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// EtcdLeader returns the index (0..2) of the etcd member that leads, asking each
// member that answers (etcdctl endpoint status, from the first client host).
func (c *Cluster) EtcdLeader(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := c.ClientHosts[0].Run(ctx, "etcdctl", "--endpoints", c.EtcdEndpoints(),
		"--dial-timeout", "1s", "--command-timeout", "2s", "endpoint", "status", "-w", "json")
	// Some members may be down: etcdctl then prints what it got and exits non-zero.
	var st []struct {
		Endpoint string `json:"Endpoint"`
		Status   struct {
			Header struct {
				MemberID uint64 `json:"member_id"`
			} `json:"header"`
			Leader uint64 `json:"leader"`
		} `json:"Status"`
	}
	i := strings.Index(out, "[")
	if i < 0 {
		return -1, fmt.Errorf("etcd leader: %v", err)
	}
	if jerr := json.NewDecoder(strings.NewReader(out[i:])).Decode(&st); jerr != nil {
		return -1, fmt.Errorf("etcd leader: %v (%v)", jerr, err)
	}
	for _, s := range st {
		if s.Status.Leader != 0 && s.Status.Leader == s.Status.Header.MemberID {
			for k, h := range c.EtcdHosts {
				if s.Endpoint == hostPort(h, EtcdPort) || s.Endpoint == "http://"+hostPort(h, EtcdPort) {
					return k, nil
				}
			}
		}
	}
	return -1, errors.New("etcd leader: no member leads")
}

// ---- ZooKeeper

// ZKJar is the ZooKeeper server of Debian's libzookeeper-java (and zookeeper).
const ZKJar = "/usr/share/java/zookeeper.jar"

// ZKServers is the ensemble's client list, host:port,host:port,host:port.
func (c *Cluster) ZKServers() string {
	var s []string
	for _, h := range c.ZKHosts {
		s = append(s, hostPort(h, ZKPort))
	}
	return strings.Join(s, ",")
}

// startZK starts a 3-member ZooKeeper ensemble, one member per host, with
// ZooKeeper's usual timing (a 2 s tick: a follower that does not hear from the
// leader for syncLimit ticks, 10 s, starts an election), and waits until a
// leader serves.
func (c *Cluster) startZK(ctx context.Context) error {
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	var members []string
	for i, h := range c.ZKHosts {
		members = append(members, fmt.Sprintf("server.%d=%s:%d:%d", i+1, h.Addr, ZKPeerPort, ZKElectPort))
	}
	for i, h := range c.ZKHosts {
		name := fmt.Sprintf("z%d", i+1)
		data := filepath.Join(c.etcdDir, "zk-"+name)
		if err := os.MkdirAll(data, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
			return err
		}
		cfg := filepath.Join(c.Dir, "zoo-"+name+".cfg")
		body := strings.Join(append([]string{"tickTime=2000", "initLimit=10", "syncLimit=5",
			"dataDir=" + data, fmt.Sprintf("clientPort=%d", ZKPort), "clientPortAddress=" + h.Addr.String(),
			"admin.enableServer=false", "4lw.commands.whitelist=ruok,srvr"}, members...), "\n") + "\n"
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			return err
		}
		p := c.proc("zookeeper-"+name, h, nil, java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Djava.net.preferIPv4Stack=true", "-cp", "/etc/zookeeper/conf:"+ZKJar,
			"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
		c.ZK = append(c.ZK, p)
		if err := p.Start(); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		leader, err := c.ZKLeader(ctx)
		if err == nil {
			c.logf("zookeeper: 3 members, leader z%d", leader+1)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("zookeeper: no leader after 60s: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// ZKModes asks each ZooKeeper member its mode (the srvr four-letter word, from
// the first client host): "leader", "follower", or "" for a member that does not
// answer or does not serve (no quorum).
func (c *Cluster) ZKModes(ctx context.Context) []string {
	modes := make([]string, len(c.ZKHosts))
	for i, h := range c.ZKHosts {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := c.ClientHosts[0].DialContext(cctx, "tcp", hostPort(h, ZKPort))
		cancel()
		if err != nil {
			continue
		}
		conn.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := conn.Write([]byte("srvr")); err == nil {
			b, _ := io.ReadAll(conn)
			for _, l := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(l, "Mode: "); ok {
					modes[i] = strings.TrimSpace(m)
				}
			}
		}
		conn.Close()
	}
	return modes
}

// ZKLeader returns the index (0..2) of the ZooKeeper member that leads.
func (c *Cluster) ZKLeader(ctx context.Context) (int, error) {
	modes := c.ZKModes(ctx)
	for i, m := range modes {
		if m == "leader" {
			return i, nil
		}
	}
	return -1, fmt.Errorf("zookeeper leader: no member leads (modes %q)", modes)
}

// ---- Redis and Sentinel

func (c *Cluster) startRedis(ctx context.Context) error {
	// Three Redis servers, each refusing writes while it is a primary with no
	// replica in sync (min-replicas-to-write): an old primary that Sentinel has
	// not yet turned into a replica after a failover (it answered as a primary for
	// about 11 s after a fail-back here) then refuses, instead of handing out the
	// same counters as the new one. With two replicas a primary's death still
	// leaves the new primary one to write with. This is the deployment
	// docs/redisgen.md asks for.
	for i, h := range c.RedisHosts {
		args := []string{"redis-server", "--bind", h.Addr.String(), "--port", strconv.Itoa(RedisPort),
			"--save", "", "--appendonly", "no", "--protected-mode", "no",
			"--min-replicas-to-write", "1", "--min-replicas-max-lag", "5",
			"--dir", c.Dir, "--dbfilename", fmt.Sprintf("r%d.rdb", i+1)}
		if i > 0 {
			args = append(args, "--replicaof", c.RedisHosts[0].Addr.String(), strconv.Itoa(RedisPort))
		}
		p := c.proc(fmt.Sprintf("redis-r%d", i+1), h, nil, args...)
		c.Redis = append(c.Redis, p)
		if err := p.Start(); err != nil {
			return err
		}
		if err := waitTCP(ctx, c.ClientHosts[0], hostPort(h, RedisPort), 20*time.Second); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
	}
	for i, h := range c.RedisHosts {
		conf := filepath.Join(c.Dir, fmt.Sprintf("sentinel-r%d.conf", i+1))
		body := fmt.Sprintf("port %d\nbind %s\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s %s %d 2\nsentinel down-after-milliseconds %s 2000\n"+
			"sentinel failover-timeout %s 6000\nsentinel parallel-syncs %s 1\n",
			SentinelPort, h.Addr, c.Dir, RedisMaster, c.RedisHosts[0].Addr, RedisPort, RedisMaster, RedisMaster, RedisMaster)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			return err
		}
		p := c.proc(fmt.Sprintf("sentinel-r%d", i+1), h, nil, "redis-server", conf, "--sentinel")
		c.Sentinels = append(c.Sentinels, p)
		if err := p.Start(); err != nil {
			return err
		}
	}
	for _, h := range c.RedisHosts {
		if err := waitTCP(ctx, c.ClientHosts[0], hostPort(h, SentinelPort), 20*time.Second); err != nil {
			return fmt.Errorf("sentinel: %w", err)
		}
	}
	// Wait until the replicas are in sync and every sentinel knows the other two.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := c.redisCLI(ctx, c.RedisHosts[0], RedisPort, "INFO", "replication")
		s, _ := c.redisCLI(ctx, c.RedisHosts[2], SentinelPort, "SENTINEL", "SENTINELS", RedisMaster)
		if strings.Count(out, "state=online") >= len(c.RedisHosts)-1 && strings.Count(s, "name") >= 2 {
			c.logf("redis: primary r1, replicas r2 and r3 online, 3 sentinels")
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis: replica or sentinels not ready after 30s: %q %q", out, s)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (c *Cluster) redisCLI(ctx context.Context, h *netns.Host, port int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.ClientHosts[0].Run(ctx, "redis-cli", append([]string{"-h", h.Addr.String(), "-p", strconv.Itoa(port)}, args...)...)
}

// RedisPrimary asks the sentinels which Redis host is the primary (index into
// RedisHosts).
func (c *Cluster) RedisPrimary(ctx context.Context) (int, error) {
	var last error
	for _, h := range c.RedisHosts {
		out, err := c.redisCLI(ctx, h, SentinelPort, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", RedisMaster)
		if err != nil {
			last = err
			continue
		}
		f := strings.Fields(out)
		if len(f) < 1 {
			continue
		}
		for i, rh := range c.RedisHosts {
			if rh.Addr.String() == f[0] {
				return i, nil
			}
		}
	}
	return -1, fmt.Errorf("redis primary: no sentinel answered: %v", last)
}

// RedisNodeURL is the URL flurry nodes use for Redis.
func (c *Cluster) RedisNodeURL() string {
	if c.opt.RedisURL == "sentinel" {
		var s []string
		for _, h := range c.RedisHosts {
			s = append(s, hostPort(h, SentinelPort))
		}
		return "redis+sentinel://" + strings.Join(s, ",") + "/" + RedisMaster + "/0"
	}
	return "redis://" + hostPort(c.RedisHosts[0], RedisPort) + "/0"
}

// ---- PostgreSQL

// Tools reports the first program the harness needs that is missing (run
// verify/harness/setup.sh to install them all).
func Tools() error {
	const setup = "run verify/harness/setup.sh (Debian packages etcd-server, etcd-client, redis-server, redis-sentinel, redis-tools, iptables, util-linux, postgresql, libzookeeper-java, default-jre-headless)"
	for _, tool := range []string{"etcd", "etcdctl", "redis-server", "redis-cli", "iptables", "setpriv", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("harness: %s not found; %s", tool, setup)
		}
	}
	if _, err := os.Stat(ZKJar); err != nil {
		return fmt.Errorf("harness: no ZooKeeper server (%s); %s", ZKJar, setup)
	}
	_, err := postgresBin()
	return err
}

func postgresBin() (string, error) {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return "", errors.New("harness: no /usr/lib/postgresql/*/bin/initdb; install Debian's postgresql")
	}
	return filepath.Dir(m[len(m)-1]), nil
}

func (c *Cluster) startPG(ctx context.Context, bin string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("postgresql: %w (install Debian's postgresql)", err)
	}
	c.pgBin, c.pgUser = bin, u
	c.PG = make([]*Proc, len(c.PGHosts))
	data := c.pgData(0)
	if err := c.pgMkdir(data); err != nil {
		return err
	}
	if out, err := c.asPG(ctx, nil, filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		return fmt.Errorf("postgresql: initdb: %v: %s", err, out)
	}
	subnet := netip.PrefixFrom(c.PGHosts[0].Addr, 16).Masked()
	hba := fmt.Sprintf("host all all %s trust\nhost replication all %s trust\n", subnet, subnet)
	f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, _ = f.WriteString(hba)
	f.Close()
	if err := c.startPGServer(ctx, 0); err != nil {
		return err
	}
	for i := 1; i < len(c.PGHosts); i++ {
		if err := c.startPGStandby(ctx, i, 0); err != nil {
			return err
		}
	}
	c.logf("postgresql: primary pg1, streaming standby pg2")
	return nil
}

func (c *Cluster) pgData(i int) string { return filepath.Join(c.Dir, fmt.Sprintf("pg%d", i+1)) }

func (c *Cluster) pgMkdir(dir string) error {
	uid, _ := strconv.Atoi(c.pgUser.Uid)
	gid, _ := strconv.Atoi(c.pgUser.Gid)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Chown(dir, uid, gid)
}

// asPG runs a PostgreSQL program as the postgres user, in host h's namespace (the
// root namespace when h is nil).
func (c *Cluster) asPG(ctx context.Context, h *netns.Host, args ...string) ([]byte, error) {
	cmd := append([]string{"setpriv", "--reuid", c.pgUser.Uid, "--regid", c.pgUser.Gid, "--init-groups"}, args...)
	if h != nil {
		cmd = append([]string{"ip", "netns", "exec", h.NS}, cmd...)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, cmd[0], cmd[1:]...).CombinedOutput()
}

// startPGServer starts the PostgreSQL server of host i on its data directory.
func (c *Cluster) startPGServer(ctx context.Context, i int) error {
	h, data := c.PGHosts[i], c.pgData(i)
	// Sockets outside the data directory: a base backup would copy their lock files.
	sock := data + "-sock"
	if _, err := os.Stat(sock); err != nil {
		if err := c.pgMkdir(sock); err != nil {
			return err
		}
	}
	args := []string{"setpriv", "--reuid", c.pgUser.Uid, "--regid", c.pgUser.Gid, "--init-groups",
		filepath.Join(c.pgBin, "postgres"), "-D", data,
		"-c", "listen_addresses=" + h.Addr.String(), "-c", "port=" + strconv.Itoa(PGPort),
		"-c", "unix_socket_directories=" + sock, "-c", "fsync=off", "-c", "max_connections=200",
		"-c", "shared_buffers=32MB", "-c", "wal_keep_size=256MB"}
	if c.PG[i] == nil {
		c.PG[i] = c.proc(fmt.Sprintf("postgres-pg%d", i+1), h, nil, args...)
	}
	c.PG[i].Args = args
	if err := c.PG[i].Start(); err != nil {
		return err
	}
	if err := waitTCP(ctx, c.ClientHosts[0], hostPort(h, PGPort), 30*time.Second); err != nil {
		return fmt.Errorf("postgresql: %w", err)
	}
	return nil
}

// startPGStandby makes host i a streaming standby of host primary: a fresh base
// backup (whatever host i had is discarded), then its server.
func (c *Cluster) startPGStandby(ctx context.Context, i, primary int) error {
	data := c.pgData(i)
	if err := os.RemoveAll(data); err != nil {
		return err
	}
	if err := c.pgMkdir(data); err != nil {
		return err
	}
	out, err := c.asPG(ctx, c.PGHosts[i], filepath.Join(c.pgBin, "pg_basebackup"), "-h", c.PGHosts[primary].Addr.String(),
		"-p", strconv.Itoa(PGPort), "-U", "postgres", "-D", data, "-R", "-X", "stream", "--no-sync")
	if err != nil {
		return fmt.Errorf("postgresql: pg_basebackup of pg%d from pg%d: %v: %s", i+1, primary+1, err, out)
	}
	return c.startPGServer(ctx, i)
}

// PGPrimary is the index of the PostgreSQL host that is the primary now.
func (c *Cluster) PGPrimary() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pgPrimary
}

// PGURL is the segment store's URL: every PostgreSQL host, with
// target_session_attrs=read-write so that the nodes use whichever is the primary.
func (c *Cluster) PGURL() string {
	var hs []string
	for _, h := range c.PGHosts {
		hs = append(hs, hostPort(h, PGPort))
	}
	return "postgres://postgres@" + strings.Join(hs, ",") + "/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2"
}

// ---- flurry nodes

// Namespaces served by every node.
const (
	NSEtcd     = "sfe" // snowflake, lease from the etcd cluster
	NSRedis    = "sfr" // snowflake, lease from Redis
	NSSegment  = "seg" // segment, PostgreSQL
	NSRedisGen = "rg"  // redisgen: each ID made inside Redis
	NSZK       = "sfz" // snowflake, lease from the ZooKeeper ensemble
)

// allNamespaces lists the namespaces every node serves.
func allNamespaces() []string { return []string{NSEtcd, NSRedis, NSSegment, NSRedisGen, NSZK} }

func (c *Cluster) nodeConfig(h *netns.Host, data string) string {
	keys := leaseKeys(c.opt.LeaseTTL, c.opt.Window, c.opt.Budget)
	return fmt.Sprintf(`listen: %s
data_dir: %s
max_count: 100000
shutdown_timeout: 5s
namespaces:
  %s:
    strategy: snowflake
    snowflake:
      lease: {store: "etcd://%s/fh?dial_timeout=2s"%s}
  %s:
    strategy: snowflake
    snowflake:
      lease: {store: "%s"%s}
  %s:
    strategy: segment
    segment:
      stores: ["%s"]
      create: {step: 1000, start: 0}
      fetch_timeout: 2s
      target: 10s
  %s:
    strategy: redis
    redis: {url: "%s", key: %s, node: "worker=1", layout: "%s"}
  %s:
    strategy: snowflake
    snowflake:
      lease: {store: "zk://%s/fh?dial_timeout=2s"%s}
`, hostPort(h, FlurryPort), data, NSEtcd, c.EtcdEndpoints(), keys, NSRedis, c.RedisNodeURL(), keys, NSSegment, c.PGURL(),
		NSRedisGen, c.RedisNodeURL(), NSRedisGen, DefaultLayout, NSZK, c.ZKServers(), keys)
}

func (c *Cluster) startNodes(ctx context.Context) error {
	for i, h := range c.NodeHosts {
		name := fmt.Sprintf("n%d", i+1)
		data := filepath.Join(c.Dir, "data-"+name)
		cfg := filepath.Join(c.Dir, name+".yaml")
		if err := os.WriteFile(cfg, []byte(c.nodeConfig(h, data)), 0o644); err != nil {
			return err
		}
		n := &Node{Name: name, Host: h, Config: cfg, Data: data}
		n.Proc = c.proc(name, h, nil, c.opt.Flurry, "serve", "--config", cfg)
		n.Proc.Stamp = true // refusals in the log are laid beside the clients' ops
		c.Nodes = append(c.Nodes, n)
	}
	// One at a time: the first creates the segment tag.
	for _, n := range c.Nodes {
		if err := c.StartNode(ctx, n, 0); err != nil {
			return err
		}
	}
	return nil
}

// StartNode starts (or restarts) a node with a clock skew (0 for none) and waits
// until it answers /readyz (up to 30 s; a node that stays not ready is left running).
func (c *Cluster) StartNode(ctx context.Context, n *Node, skew time.Duration) error {
	if err := c.launch(n, skew); err != nil {
		return err
	}
	return c.WaitReady(ctx, n, 30*time.Second)
}

// launch starts a node's process with a clock skew (0 for none).
func (c *Cluster) launch(n *Node, skew time.Duration) error { return n.launch(skew, &c.progress) }

// WaitReady waits until the node answers /readyz with 200.
func (c *Cluster) WaitReady(ctx context.Context, n *Node, d time.Duration) error {
	return n.waitReady(ctx, c.ClientHosts[0], d)
}

// leaseValue asks node n (GET /v1/info) which node value namespace ns holds.
func (c *Cluster) leaseValue(ctx context.Context, n *Node, ns string) (int64, error) {
	hc := httpClient(c.ClientHosts[0], 3*time.Second)
	resp, err := hc.Get(n.URL() + "/v1/info?namespace=" + ns)
	if err != nil {
		return 0, fmt.Errorf("info of %s: %w", n.Name, err)
	}
	defer resp.Body.Close()
	var info struct {
		Namespaces []struct {
			Name  string `json:"name"`
			Lease struct {
				Value json.Number `json:"value"`
				State string      `json:"state"`
			} `json:"lease"`
		} `json:"namespaces"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return 0, fmt.Errorf("info of %s: %w", n.Name, err)
	}
	for _, x := range info.Namespaces {
		if x.Name == ns {
			if x.Lease.State != "held" {
				return 0, fmt.Errorf("%s holds no %s lease (%q)", n.Name, ns, x.Lease.State)
			}
			if x.Lease.Value == "" {
				return 0, nil // protojson leaves out a zero
			}
			return x.Lease.Value.Int64()
		}
	}
	return 0, fmt.Errorf("info of %s: no namespace %s", n.Name, ns)
}
