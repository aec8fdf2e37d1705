package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/netns"
)

// Action is what a fault does: Begin breaks something, End repairs it. Both get the
// cluster and a log of node restarts (for the checker).
type Action interface {
	Begin(ctx context.Context, e *Env) error
	End(ctx context.Context, e *Env) error
}

// Env is what actions act on: the cluster, a record of node restarts, a sink for
// IDs that a fault's own processes received (a takeover's), and the prober that
// times each restarted node's first IDs.
type Env struct {
	C *Cluster
	// R is the two-region system when the schedule is the regions one
	// (RunRegions); C is then nil.
	R        *Regions
	restarts func(node string, at time.Time)
	ops      func(checker.Op)
	probe    *prober // nil: restarts are not timed
}

// restartNode stops a node (SIGTERM, or SIGKILL when kill) and starts it again with
// a clock skew, recording the restart as one of the kind given (see startNode).
func (e *Env) restartNode(ctx context.Context, n *Node, kill bool, skew time.Duration, kind restart) error {
	if kill {
		if err := n.Proc.Kill(); err != nil {
			return err
		}
	} else if err := n.Proc.Stop(10 * time.Second); err != nil {
		return err
	}
	return e.startNode(ctx, n, skew, kind)
}

// restart describes a node's restart for the report's table: how it was done, and
// how far the node's clock then stands behind the IDs it issued before (it must
// wait that long before it issues again).
type restart struct {
	kind   string
	behind time.Duration
}

// startNode starts a node that does not run, records the restart for the checker
// and has the prober time the node's first ID of each namespace from the process's
// start.
func (e *Env) startNode(ctx context.Context, n *Node, skew time.Duration, kind restart) error {
	if err := e.C.launch(n, skew); err != nil {
		return err
	}
	at := n.Proc.StartedAt()
	e.restarts(n.Name, at)
	if e.probe != nil {
		e.probe.start(n, kind, at)
	}
	err := e.C.WaitReady(ctx, n, 30*time.Second)
	if err != nil && n.Proc.Running() {
		// Running but not ready (fenced, clock behind its mark): that is for the
		// checker's availability figures, not an error of the harness.
		e.C.logf("node %s: %v", n.Name, err)
		return nil
	}
	return err
}

// storeRules are rules that cut a host off the stores (every port of every store host).
func (c *Cluster) storeHosts() []*netns.Host {
	hs := append([]*netns.Host{}, c.EtcdHosts...)
	hs = append(hs, c.RedisHosts...)
	hs = append(hs, c.ZKHosts...)
	return append(hs, c.PGHosts...)
}

// ---- partitions

// PartitionStores cuts node i (0-based) off every store host, both ways (drop); the
// clients still reach it.
func PartitionStores(i int) Action { return partitionStores{i} }

type partitionStores struct{ i int }

func (a partitionStores) Begin(ctx context.Context, e *Env) error {
	var rules []netns.Rule
	for _, h := range e.C.storeHosts() {
		rules = append(rules, netns.Rule{Peer: h.Addr, Action: netns.Drop})
	}
	return e.C.NodeHosts[a.i].Block(ctx, "partition-stores", rules...)
}

func (a partitionStores) End(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Unblock(ctx, "partition-stores")
}

// PartitionClients cuts node i off the client hosts, both ways (drop); it still
// reaches the stores and keeps its leases.
func PartitionClients(i int) Action { return partitionClients{i} }

type partitionClients struct{ i int }

func (a partitionClients) Begin(ctx context.Context, e *Env) error {
	var rules []netns.Rule
	for _, h := range e.C.ClientHosts {
		rules = append(rules, netns.Rule{Peer: h.Addr, Action: netns.Drop})
	}
	return e.C.NodeHosts[a.i].Block(ctx, "partition-clients", rules...)
}

func (a partitionClients) End(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Unblock(ctx, "partition-clients")
}

// ---- a store hangs or refuses, for every node

// Store names a store of the cluster.
type Store string

// The stores.
const (
	StoreEtcd  Store = "etcd"
	StoreRedis Store = "redis"
	StorePG    Store = "postgres"
	StoreZK    Store = "zookeeper"
)

// StoreDown makes a store unreachable for every flurry node while it stays healthy
// for everyone else: netns.Drop makes it hang (packets vanish both ways), netns.Reject
// makes it refuse (TCP resets from the store's host, to new and open connections).
func StoreDown(s Store, how netns.Action) Action { return storeDown{s, how} }

type storeDown struct {
	s   Store
	how netns.Action
}

func (a storeDown) ports() ([]*netns.Host, []int) {
	switch a.s {
	case StoreEtcd:
		return nil, []int{EtcdPort}
	case StoreRedis:
		return nil, []int{RedisPort, SentinelPort}
	case StoreZK:
		return nil, []int{ZKPort}
	default:
		return nil, []int{PGPort}
	}
}

func (a storeDown) hosts(c *Cluster) []*netns.Host {
	switch a.s {
	case StoreEtcd:
		return c.EtcdHosts
	case StoreRedis:
		return c.RedisHosts
	case StoreZK:
		return c.ZKHosts
	default:
		return c.PGHosts
	}
}

func (a storeDown) name() string { return "store-down-" + string(a.s) }

func (a storeDown) Begin(ctx context.Context, e *Env) error {
	_, ports := a.ports()
	if a.how == netns.Drop {
		// On each node: packets to and from the store's ports vanish.
		for _, n := range e.C.NodeHosts {
			var rules []netns.Rule
			for _, h := range a.hosts(e.C) {
				for _, p := range ports {
					rules = append(rules, netns.Rule{Peer: h.Addr, PeerPort: p, Action: netns.Drop})
				}
			}
			if err := n.Block(ctx, a.name(), rules...); err != nil {
				return err
			}
		}
		return nil
	}
	// On each store host: the nodes' packets get a reset.
	for _, h := range a.hosts(e.C) {
		var rules []netns.Rule
		for _, n := range e.C.NodeHosts {
			for _, p := range ports {
				rules = append(rules, netns.Rule{Peer: n.Addr, LocalPort: p, Action: netns.Reject})
			}
		}
		if err := h.Block(ctx, a.name(), rules...); err != nil {
			return err
		}
	}
	return nil
}

func (a storeDown) End(ctx context.Context, e *Env) error {
	for _, h := range append(append([]*netns.Host{}, e.C.NodeHosts...), a.hosts(e.C)...) {
		if err := h.Unblock(ctx, a.name()); err != nil {
			return err
		}
	}
	return nil
}

// ---- packet loss

// Loss drops pct % of node i's packets at random, both ways (tc netem's loss; this
// machine's kernel may lack sch_netem, so it is an nftables rule).
func Loss(i, pct int) Action { return loss{i, pct} }

type loss struct{ i, pct int }

func (a loss) Begin(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Block(ctx, "loss", netns.Rule{Action: netns.Lose, Percent: a.pct})
}

func (a loss) End(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Unblock(ctx, "loss")
}

// Delay holds every packet node i sends for d (to the stores and to the clients):
// tc netem's delay, made with NFQUEUE because this machine's kernel lacks sch_netem.
func Delay(i int, d time.Duration) Action { return &delay{i: i, d: d} }

type delay struct {
	i  int
	d  time.Duration
	dl *netns.Delay
}

func (a *delay) Begin(ctx context.Context, e *Env) error {
	dl, err := e.C.NodeHosts[a.i].StartDelay(ctx, 7, a.d)
	a.dl = dl
	return err
}

func (a *delay) End(ctx context.Context, e *Env) error {
	if a.dl == nil {
		return nil
	}
	return a.dl.Stop(ctx)
}

// Netem puts tc netem arguments (e.g. "delay 300ms 100ms") on node i's interface.
// It needs a kernel with sch_netem.
func Netem(i int, args string) Action { return netem{i, args} }

type netem struct {
	i    int
	args string
}

func (a netem) Begin(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Netem(ctx, a.args)
}

func (a netem) End(ctx context.Context, e *Env) error {
	return e.C.NodeHosts[a.i].Netem(ctx, "")
}

// ---- etcd

// KillEtcdLeader SIGKILLs the etcd member that leads when the fault begins and
// starts it again (same data) when it ends.
func KillEtcdLeader() Action { return &killEtcdLeader{} }

type killEtcdLeader struct{ killed int }

func (a *killEtcdLeader) Begin(ctx context.Context, e *Env) error {
	l, err := e.C.EtcdLeader(ctx)
	if err != nil {
		return err
	}
	a.killed = l
	e.C.logf("etcd: killing leader e%d", l+1)
	return e.C.Etcd[l].Kill()
}

func (a *killEtcdLeader) End(ctx context.Context, e *Env) error {
	p := e.C.Etcd[a.killed]
	// A restarted member rejoins with its data: "existing", not "new".
	for i, s := range p.Args {
		if s == "--initial-cluster-state" {
			p.Args[i+1] = "existing"
		}
	}
	if err := p.Start(); err != nil {
		return err
	}
	return waitTCP(ctx, e.C.ClientHosts[0], hostPort(e.C.EtcdHosts[a.killed], EtcdPort), 20*time.Second)
}

// ---- ZooKeeper

// KillZK SIGKILLs a ZooKeeper member when the fault begins and starts it again
// (same data) when it ends: the leader, or else a follower (the pick-th of those
// that answer, modulo their number). Losing a follower leaves a quorum and its
// leader, and the clients connected to it move to another member; losing the
// leader makes the others elect a new one, and no write commits until they have.
func KillZK(leader bool, pick int) Action { return &killZK{leader: leader, pick: pick, killed: -1} }

type killZK struct {
	leader bool
	pick   int
	killed int
}

func (a *killZK) Begin(ctx context.Context, e *Env) error {
	c := e.C
	var victim int
	if a.leader {
		l, err := c.ZKLeader(ctx)
		if err != nil {
			return err
		}
		victim = l
	} else {
		var followers []int
		for i, m := range c.ZKModes(ctx) {
			if m == "follower" {
				followers = append(followers, i)
			}
		}
		if len(followers) == 0 {
			return errors.New("zookeeper: no member answers as a follower")
		}
		victim = followers[a.pick%len(followers)]
	}
	a.killed = victim
	c.logf("zookeeper: killing %s z%d", map[bool]string{true: "leader", false: "follower"}[a.leader], victim+1)
	return c.ZK[victim].Kill()
}

func (a *killZK) End(ctx context.Context, e *Env) error {
	if a.killed < 0 {
		return nil
	}
	c := e.C
	if err := c.ZK[a.killed].Start(); err != nil {
		return err
	}
	// Back once it serves again, as a follower of whoever leads now.
	deadline := time.Now().Add(60 * time.Second)
	for {
		modes := c.ZKModes(ctx)
		if modes[a.killed] != "" {
			c.logf("zookeeper: z%d back as %s", a.killed+1, modes[a.killed])
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("zookeeper: z%d does not serve 60s after its restart (modes %q)", a.killed+1, modes)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// ---- Redis

// RedisFailover asks the sentinels for a failover (SENTINEL FAILOVER): the replica
// is promoted, the primary becomes its replica. End fails back to the first primary.
func RedisFailover() Action { return &redisFailover{} }

type redisFailover struct{ before int }

func (a *redisFailover) Begin(ctx context.Context, e *Env) error {
	before, err := e.C.RedisPrimary(ctx)
	if err != nil {
		return err
	}
	a.before = before
	out, err := e.C.redisCLI(ctx, e.C.RedisHosts[2], SentinelPort, "SENTINEL", "FAILOVER", RedisMaster)
	if err != nil || !strings.Contains(out, "OK") {
		return fmt.Errorf("redis: SENTINEL FAILOVER: %v %s", err, out)
	}
	e.C.logf("redis: failover asked (primary was r%d)", before+1)
	return nil
}

func (a *redisFailover) End(ctx context.Context, e *Env) error { return failBack(ctx, e, a.before) }

// failBack makes Redis host want the primary again (SENTINEL FAILOVER once it is an
// online replica), so that the rest of a run starts from the same topology: nodes
// that reach Redis by a plain redis:// URL to the first primary work again.
func failBack(ctx context.Context, e *Env, want int) error {
	// Sentinel promotes any replica in sync; with two, it may pick the other one.
	// While failing back, the others get replica-priority 0 (never promoted), and
	// their usual priority back once want leads.
	others := func(prio string) {
		for i, h := range e.C.RedisHosts {
			if i != want {
				e.C.redisCLI(ctx, h, RedisPort, "CONFIG", "SET", "replica-priority", prio)
			}
		}
	}
	defer others("100")
	deadline := time.Now().Add(40 * time.Second)
	asked := -1 // the primary a failover was asked of
	var askedAt, lastWhy time.Time
	for time.Now().Before(deadline) {
		p, err := e.C.RedisPrimary(ctx)
		if err == nil && p == want {
			if asked >= 0 {
				e.C.logf("redis: r%d is the primary again", want+1)
			}
			return nil
		}
		// SENTINEL FAILOVER answers OK and may then abort (no good replica: the
		// sentinels still think want is down): ask again after a while.
		if asked >= 0 && time.Since(askedAt) > 4*time.Second {
			asked = -1
		}
		if err == nil && asked != p {
			info, _ := e.C.redisCLI(ctx, e.C.RedisHosts[p], RedisPort, "INFO", "replication")
			mine, _ := e.C.redisCLI(ctx, e.C.RedisHosts[want], RedisPort, "INFO", "replication")
			if why := replicaSynced(info, mine, e.C.RedisHosts[want].Addr.String()); why != "" {
				if time.Since(lastWhy) > 5*time.Second {
					e.C.logf("redis: not failing back to r%d yet: %s", want+1, why)
					lastWhy = time.Now()
				}
			} else {
				others("0")
				out, err := e.C.redisCLI(ctx, e.C.RedisHosts[2], SentinelPort, "SENTINEL", "FAILOVER", RedisMaster)
				if err == nil && strings.Contains(out, "OK") {
					asked, askedAt = p, time.Now()
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("redis: r%d is not the primary again after 40s", want+1)
}

// replicaSynced says why the replica at addr is not yet fit to be promoted over
// the primary whose INFO replication is primary (the replica's own is replica),
// or "" when it is: the primary lists it online with at most a second's lag, and
// the replica's link to it is up with no sync in progress. A replica that
// restarted empty shows up in the primary's list (state wait_bgsave or
// send_bulk) before its first sync is done, while another replica is online:
// promoting it then makes an empty primary, and every replica then resyncs
// from it. A careful operator fails back only once the replica holds the data.
func replicaSynced(primary, replica, addr string) string {
	var line string
	for l := range strings.Lines(primary) {
		if strings.HasPrefix(l, "slave") && strings.Contains(l, ":ip="+addr+",") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		return "the primary does not list it as a replica"
	}
	if !strings.Contains(line, ",state=online,") {
		return "the primary lists it, not online: " + line
	}
	if i := strings.Index(line, ",lag="); i < 0 || line[i+len(",lag="):] != "0" && line[i+len(",lag="):] != "1" {
		return "it lags behind the primary: " + line
	}
	if !strings.Contains(replica, "master_link_status:up") {
		return "its link to the primary is not up"
	}
	if !strings.Contains(replica, "master_sync_in_progress:0") {
		return "its first sync is still in progress"
	}
	return ""
}

// KillRedisPrimary SIGKILLs the Redis primary; the sentinels promote the replica
// after down-after-milliseconds (2 s). End starts the old primary again as a replica
// of the new one (the data it had is gone: no persistence, as a crashed cache host),
// and once it is in sync fails back to it.
func KillRedisPrimary() Action { return &killRedisPrimary{} }

type killRedisPrimary struct{ killed int }

func (a *killRedisPrimary) Begin(ctx context.Context, e *Env) error {
	p, err := e.C.RedisPrimary(ctx)
	if err != nil {
		return err
	}
	a.killed = p
	e.C.logf("redis: killing primary r%d", p+1)
	return e.C.Redis[p].Kill()
}

func (a *killRedisPrimary) End(ctx context.Context, e *Env) error {
	deadline := time.Now().Add(20 * time.Second)
	now := -1
	for time.Now().Before(deadline) {
		if p, err := e.C.RedisPrimary(ctx); err == nil && p != a.killed {
			now = p
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if now < 0 {
		return fmt.Errorf("redis: no new primary 20s after r%d was killed", a.killed+1)
	}
	p := e.C.Redis[a.killed]
	args := []string{}
	for i := 0; i < len(p.Args); i++ {
		if p.Args[i] == "--replicaof" {
			i += 2
			continue
		}
		args = append(args, p.Args[i])
	}
	p.Args = append(args, "--replicaof", e.C.RedisHosts[now].Addr.String(), strconv.Itoa(RedisPort))
	// The RDB file a full sync made while it was the primary would give it
	// back an old copy: it comes back empty, as the comment above says.
	if err := os.Remove(filepath.Join(e.C.Dir, fmt.Sprintf("r%d.rdb", a.killed+1))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	return failBack(ctx, e, a.killed)
}

// ---- PostgreSQL

// PGFailover SIGKILLs the PostgreSQL primary and promotes the standby (pg_ctl
// promote), as an operator or a failover manager would; the nodes' multi-host URL
// with target_session_attrs=read-write finds the new primary. End makes the old
// primary a standby of the new one (a fresh base backup). Replication is
// asynchronous: a commit the standby had not received when the primary died is lost.
func PGFailover() Action { return &pgFailover{} }

type pgFailover struct{ old int }

func (a *pgFailover) Begin(ctx context.Context, e *Env) error {
	c := e.C
	a.old = c.PGPrimary()
	standby := 1 - a.old
	c.logf("postgresql: killing primary pg%d, promoting pg%d", a.old+1, standby+1)
	if err := c.PG[a.old].Kill(); err != nil {
		return err
	}
	out, err := c.asPG(ctx, nil, filepath.Join(c.pgBin, "pg_ctl"), "promote", "-w", "-t", "30", "-D", c.pgData(standby))
	if err != nil {
		return fmt.Errorf("postgresql: promote pg%d: %v: %s", standby+1, err, out)
	}
	c.mu.Lock()
	c.pgPrimary = standby
	c.mu.Unlock()
	return nil
}

func (a *pgFailover) End(ctx context.Context, e *Env) error {
	return e.C.startPGStandby(ctx, a.old, 1-a.old)
}

// ---- flurry nodes

// KillNode SIGKILLs node i; End starts it again.
func KillNode(i int) Action { return killNode{i} }

type killNode struct{ i int }

func (a killNode) Begin(ctx context.Context, e *Env) error { return e.C.Nodes[a.i].Proc.Kill() }
func (a killNode) End(ctx context.Context, e *Env) error {
	return e.startNode(ctx, e.C.Nodes[a.i], 0, restart{"SIGKILL, restart", 0})
}

// PauseNode SIGSTOPs node i; End SIGCONTs it.
func PauseNode(i int) Action { return pauseNode{i} }

type pauseNode struct{ i int }

func (a pauseNode) Begin(ctx context.Context, e *Env) error {
	return e.C.Nodes[a.i].Proc.Signal(syscall.SIGSTOP)
}
func (a pauseNode) End(ctx context.Context, e *Env) error {
	return e.C.Nodes[a.i].Proc.Signal(syscall.SIGCONT)
}

// PauseTakeover SIGSTOPs node i and, once its lease has expired (the TTL the nodes
// run with, Cluster.TTL, + 1 s), has another process take its etcd node value
// (flurry gen --lease ... --fixed V on a client host) and issue IDs with it; then it
// SIGCONTs node i while that process still issues. Node i must not issue with the value again: if its fencing failed,
// its IDs and the taker's would collide (same value, same ticks), and the checker
// would count duplicates. End stops the taker; its IDs go to the checker as node
// "takeover".
func PauseTakeover(i int) Action { return &pauseTakeover{i: i} }

type pauseTakeover struct {
	i     int
	value int64
	gen   *gen
}

func (a *pauseTakeover) Begin(ctx context.Context, e *Env) error {
	c := e.C
	n := c.Nodes[a.i]
	v, err := c.leaseValue(ctx, n, NSEtcd)
	if err != nil {
		return err
	}
	a.value = v
	if err := n.Proc.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	c.logf("takeover: %s paused holding %s value %d; waiting out the lease", n.Name, NSEtcd, v)
	if !sleepUntil(ctx, time.Now().Add(c.TTL()+time.Second)) {
		return ctx.Err()
	}
	args := []string{"--lease", "etcd://" + c.EtcdEndpoints() + "/fh?dial_timeout=2s", "--scope", NSEtcd, "--fixed", strconv.FormatInt(v, 10)}
	if c.opt.LeaseTTL > 0 {
		args = append(args, "--ttl", c.opt.LeaseTTL.String())
	}
	a.gen, err = startGen(ctx, e, "takeover", true, args...)
	if err != nil {
		return err
	}
	a.gen.waitFirst(15 * time.Second)
	c.logf("takeover: gen issues with value %d; waking %s", v, n.Name)
	return n.Proc.Signal(syscall.SIGCONT)
}

func (a *pauseTakeover) End(ctx context.Context, e *Env) error {
	if a.gen == nil {
		return e.C.Nodes[a.i].Proc.Signal(syscall.SIGCONT)
	}
	a.gen.stop()
	return nil
}

// gen is a flurry gen process on the last client host whose IDs are read as ops
// of a pseudo node.
type gen struct {
	cmd   *exec.Cmd
	done  chan struct{}
	first chan struct{}
}

// startGen runs flurry gen with args (and the harness's layout, and no end) and
// reads its IDs as ops of node name.
func startGen(ctx context.Context, e *Env, name string, paced bool, args ...string) (*gen, error) {
	c := e.C
	h := c.ClientHosts[len(c.ClientHosts)-1]
	args = append([]string{"gen", "--layout", DefaultLayout, "-n", "1e9"}, args...)
	g := &gen{cmd: h.Command(context.WithoutCancel(ctx), c.opt.Flurry, args...), done: make(chan struct{}), first: make(chan struct{})}
	g.cmd.Stderr = &logWriter{c: c, prefix: name + " gen: "}
	out, err := g.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		defer close(g.done)
		readGen(out, name, paced, e.ops, g.first)
	}()
	return g, nil
}

// waitFirst waits up to d for the first ID.
func (g *gen) waitFirst(d time.Duration) {
	select {
	case <-g.first:
	case <-g.done:
	case <-time.After(d):
	}
}

// stop interrupts gen and waits for its last IDs.
func (g *gen) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-g.done:
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
	_ = g.cmd.Wait()
}

// RogueNode runs, for the harness's self-test, a process with node i's etcd node
// value and no lease at all (flurry gen --node worker=V) while node i issues with
// it: the checker must find duplicates. It is not in the catalog.
func RogueNode(i int) Action { return &rogue{i: i} }

type rogue struct {
	i   int
	gen *gen
}

func (a *rogue) Begin(ctx context.Context, e *Env) error {
	v, err := e.C.leaseValue(ctx, e.C.Nodes[a.i], NSEtcd)
	if err != nil {
		return err
	}
	// Unpaced: it fills every tick while it runs, so every request to node i in
	// that time collides with it.
	a.gen, err = startGen(ctx, e, "rogue", false, "--node", fmt.Sprintf("worker=%d", v))
	return err
}

func (a *rogue) End(ctx context.Context, e *Env) error {
	if a.gen != nil {
		a.gen.stop()
	}
	return nil
}

// readGen turns gen's output into ops of 1,000 IDs of namespace sfe and node name;
// paced, it reads one op every 5 ms at most (gen issues only as fast as it is read,
// so its IDs span the whole fault) up to 20 million IDs, else as fast as gen
// writes, up to 5 million. first is closed at the first ID.
func readGen(r io.Reader, name string, paced bool, ops func(checker.Op), first chan struct{}) {
	sc := bufio.NewScanner(r)
	op := checker.Op{Client: "nemesis", Node: name, Namespace: NSEtcd, Start: time.Now()}
	total := 0
	flush := func() {
		if len(op.IDs) > 0 {
			op.End = time.Now()
			ops(op)
		}
		op = checker.Op{Client: "nemesis", Node: name, Namespace: NSEtcd, Start: time.Now()}
	}
	limit := 20_000_000
	if !paced {
		limit = 5_000_000
	}
	for sc.Scan() && total < limit {
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			continue
		}
		if total == 0 {
			close(first)
		}
		total++
		op.IDs = append(op.IDs, v)
		if len(op.IDs) == 1000 {
			flush()
			if paced {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	flush()
	_, _ = io.Copy(io.Discard, r)
}

// logWriter writes a process's output to the harness log, line by line.
type logWriter struct {
	c      *Cluster
	prefix string
}

func (w *logWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		w.c.logf("%s%s", w.prefix, l)
	}
	return len(b), nil
}

// SkewNode restarts node i with its clock shifted by skew (FLURRY_CLOCK_SKEW); End
// restarts it with the true clock. Both restarts are graceful (SIGTERM).
func SkewNode(i int, skew time.Duration) Action { return skewNode{i, skew} }

type skewNode struct {
	i    int
	skew time.Duration
}

// A restart with the clock behind stands behind the IDs the node issued before by
// the skew; the restart on the true clock after running ahead, by as much.
func (a skewNode) Begin(ctx context.Context, e *Env) error {
	kind := restart{fmt.Sprintf("SIGTERM, restart %s ahead", a.skew), 0}
	if a.skew < 0 {
		kind = restart{fmt.Sprintf("SIGTERM, restart %s behind", -a.skew), -a.skew}
	}
	return e.restartNode(ctx, e.C.Nodes[a.i], false, a.skew, kind)
}
func (a skewNode) End(ctx context.Context, e *Env) error {
	kind := restart{fmt.Sprintf("SIGTERM, restart on the true clock after %s ahead", a.skew), a.skew}
	if a.skew < 0 {
		kind = restart{fmt.Sprintf("SIGTERM, restart on the true clock after %s behind", -a.skew), 0}
	}
	return e.restartNode(ctx, e.C.Nodes[a.i], false, 0, kind)
}

// RollingRestart restarts the three nodes one after the other (SIGTERM, start, wait
// until ready), under load; End does nothing.
func RollingRestart() Action { return rolling{} }

type rolling struct{}

func (rolling) Begin(ctx context.Context, e *Env) error {
	for _, n := range e.C.Nodes {
		if err := e.restartNode(ctx, n, false, 0, restart{"rolling restart (SIGTERM, start, ready)", 0}); err != nil {
			return err
		}
	}
	return nil
}
func (rolling) End(ctx context.Context, e *Env) error { return nil }
