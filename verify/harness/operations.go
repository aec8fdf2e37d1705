package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
	"github.com/flurryid/flurry/verify/netns"
)

// The operations nemesis: what operators do to data directories, configurations
// and registries, rather than what networks and machines do to packets and
// processes. Each fault starts processes of its own (a copy of a node, a second
// deployment, a stand-in Leaf server) on the spare hosts, loads them and the
// nodes they may collide with through a workload of its own (fhclient on the last
// client host), and hands every op to the checker under the name of the process
// that answered it, so that an ID issued by both an original and its copy counts
// as a duplicate. Every process and directory a fault makes is gone at its End.

// Namespaces of the operations nemesis, served by processes of the faults only.
const (
	NSPrivate = "sfp" // snowflake on each server's own embedded file store
	NSLeaf    = "sfl" // snowflake on a Leaf registry (leafzk://), layout leaf
)

// Groups of kinds that Plan (and faultrun's -kinds) expands: OperationsGroup to
// every operations kind, DefaultGroup to the default schedule's kinds.
const (
	OperationsGroup = "operations"
	DefaultGroup    = "default"
)

// opsLoadRate is each operations workload's requests per second (raw HTTP,
// batches of 1,000) or Next calls per second (Go client).
const (
	opsLoadRate  = 200.0
	opsCallRate  = 2000.0
	opsLoadGrace = 30 * time.Second // a workload's -duration beyond its fault's
)

// OperationsKinds lists the operations nemesis's kinds, in catalog order.
func OperationsKinds() []string {
	var s []string
	for _, k := range operationsCatalog() {
		s = append(s, k.Name)
	}
	return s
}

// operationsCatalog is the operations kinds. They are Extra: a default schedule
// leaves them out; -kinds operations, or each name, runs them.
func operationsCatalog() []Kind {
	return []Kind{
		{Name: "clone-crashed", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d SIGKILL, its data directory copied to a second server", i+1),
				For: 10*time.Second + time.Duration(r.Int64N(int64(3*time.Second))), Action: &cloneNode{i: i, crashed: true}}
		}},
		{Name: "clone-running", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i := node(r)
			return Fault{Name: fmt.Sprintf("n%d's data directory copied while it runs, a second server on the copy", i+1),
				For: 10*time.Second + time.Duration(r.Int64N(int64(3*time.Second))), Action: &cloneNode{i: i}}
		}},
		{Name: "restore-backup", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i, on := node(r), 8*time.Second+time.Duration(r.Int64N(int64(2*time.Second)))
			return Fault{Name: fmt.Sprintf("n%d SIGKILL, its data directory restored from a copy %s old", i+1, on.Round(100*time.Millisecond)),
				For: on + 10*time.Second, Action: &restoreNode{i: i, runOn: on}}
		}},
		{Name: "revert-snapshot", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			i, on := node(r), 8*time.Second+time.Duration(r.Int64N(int64(2*time.Second)))
			return Fault{Name: fmt.Sprintf("n%d reverted to a snapshot %s old, clock and data directory", i+1, on.Round(100*time.Millisecond)),
				For: on + 10*time.Second, Action: &restoreNode{i: i, runOn: on, clock: true}}
		}},
		{Name: "second-deployment", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			v := 32 + r.IntN(32)
			return Fault{Name: fmt.Sprintf("two deployments with fixed: %d on the nodes' scopes", v), For: brief(r) + 4*time.Second,
				Action: &secondDeployment{value: v}}
		}},
		{Name: "private-stores", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "two servers on private file stores behind one Go client", For: brief(r) + 4*time.Second, Action: &privateStores{}}
		}},
		{Name: "silent-leaf", Extra: true, Make: func(r *rand.Rand, ttl time.Duration) Fault {
			return Fault{Name: "a Leaf server that stopped writing its node, flurry at its address", For: 24*time.Second + time.Duration(r.Int64N(int64(3*time.Second))),
				Action: &silentLeaf{name: fmt.Sprintf("fhleaf%d", r.IntN(1_000_000))}}
		}},
	}
}

// opsFault is an operations fault's account of its own workload: how many IDs
// each process answered (an original and its copy, two deployments, a Leaf
// server and the flurry server at its address), for the report.
type opsFault interface{ processIDs() map[string]int }

// ---- spare processes and their workload

// startSpare starts a flurry serve process of a fault on host h with the
// configuration body (written to <run dir>/<name>.yaml) and waits up to wait for it
// to be ready (0: not at all). A process that exits or stays not ready is a result
// of the fault (a server that refuses a copied journal or a held value), not an
// error: it is logged and returned with a nil error; the caller's workload records
// its refusals.
func (e *Env) startSpare(ctx context.Context, name string, h *netns.Host, body string, wait time.Duration) (*Node, error) {
	c := e.C
	cfg := filepath.Join(c.Dir, name+".yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		return nil, err
	}
	n := &Node{Name: name, Host: h, Config: cfg}
	n.Proc = c.proc(name, h, nil, c.opt.Flurry, "serve", "--config", cfg)
	n.Proc.Stamp = true
	if err := n.Proc.Start(); err != nil {
		return nil, err
	}
	c.logf("operations: %s started on %s", name, h.Name)
	if wait > 0 {
		if err := c.WaitReady(ctx, n, wait); err != nil {
			c.logf("operations: %s: %v", name, err)
		}
	}
	return n, nil
}

// spareData makes an empty data directory for a spare process.
func (c *Cluster) spareData(name string) (string, error) {
	d := filepath.Join(c.Dir, "data-"+name)
	if err := os.RemoveAll(d); err != nil {
		return "", err
	}
	return d, os.MkdirAll(d, 0o755)
}

// copyDir copies a data directory as an operator does (cp -a: modes, times, every
// file as it is at that moment), replacing dst.
func copyDir(ctx context.Context, src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
	return nil
}

// opsLoad is a fault's own workload: fhclient on the last client host, against
// the processes the fault may make collide, whose ops go to the checker at stop.
type opsLoad struct {
	proc   *Proc
	out    string
	client bool
}

// startLoad runs a workload against nodes on namespaces nss for up to d (plus a
// grace): raw HTTP batches of 1,000 moving between the nodes every few requests,
// or (client) two Go clients each given every node, in opposite orders.
func (e *Env) startLoad(name string, nodes []*Node, nss []string, client bool, d time.Duration) (*opsLoad, error) {
	c := e.C
	var list []string
	for _, n := range nodes {
		list = append(list, n.Name+"="+n.URL())
	}
	out := filepath.Join(c.Dir, "ops-"+name+".tsv")
	args := []string{c.opt.Client, "-name", name, "-nodes", strings.Join(list, ","), "-ns", strings.Join(nss, ","),
		"-duration", (d + opsLoadGrace).String(), "-out", out, "-workers", "2", "-timeout", "2s"}
	if client {
		args = append(args, "-mode", "client", "-clients", "2", "-rate", fmt.Sprint(opsCallRate), "-max-requests", "2000000")
	} else {
		args = append(args, "-count", "1000", "-rotate", "5", "-rate", fmt.Sprint(opsLoadRate), "-max-requests", "200000")
	}
	p := c.proc("client-"+name, c.ClientHosts[len(c.ClientHosts)-1], nil, args...)
	if err := p.Start(); err != nil {
		return nil, err
	}
	return &opsLoad{proc: p, out: out, client: client}, nil
}

// stop ends the workload and hands its ops to the checker, out of the availability
// figures (the main workloads measure those). It returns how many IDs each process
// answered.
func (l *opsLoad) stop(e *Env) (map[string]int, error) {
	if l == nil {
		return nil, nil
	}
	if err := l.proc.Stop(15 * time.Second); err != nil {
		return nil, err
	}
	if err := l.proc.ExitErr(); err != nil {
		// A Go client that refuses its servers exits 1 and says why.
		e.C.logf("operations: workload %s: %v (log %s)", l.proc.Name, err, l.proc.Log)
	}
	f, err := os.Open(l.out)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	ids := map[string]int{}
	untraced := 0
	err = oplog.Read(f, func(op checker.Op) {
		op.NoAvailability = true
		if op.Node == oplog.Untraced {
			untraced += len(op.IDs)
			op.Node = fmt.Sprintf("%s (%s op %d)", oplog.Untraced, l.proc.Name, untraced)
		}
		ids[op.Node] += len(op.IDs)
		e.ops(op)
	})
	e.C.logf("operations: workload %s: IDs per process %v", l.proc.Name, ids)
	return ids, err
}

// ---- clone-crashed, clone-running

// cloneNode copies node i's data directory onto a second server on the first spare
// host: after a SIGKILL (crashed: both then start, the node on its own directory,
// the copy on the copy) or while the node runs. This is what a VM or volume clone,
// a golden image with a data directory in it, a restored volume snapshot used for
// a new server, or `cp -a` to provision one all do. End stops the copy (SIGKILL: a
// throwaway) and removes its directory.
type cloneNode struct {
	i       int
	crashed bool
	touched bool // Begin killed the node or started its copy
	copy    *Node
	load    *opsLoad
	ids     map[string]int
}

func (a *cloneNode) Begin(ctx context.Context, e *Env) error {
	c := e.C
	n := c.Nodes[a.i]
	name := n.Name + "-copy"
	dst := filepath.Join(c.Dir, "data-"+name)
	a.touched = true
	if a.crashed {
		if err := n.Proc.Kill(); err != nil {
			return err
		}
	}
	if err := copyDir(ctx, n.Data, dst); err != nil {
		return err
	}
	if a.crashed {
		if err := e.startNode(ctx, n, 0, restart{"SIGKILL, restart (its data directory copied)", 0}); err != nil {
			return err
		}
	}
	cp, err := e.startSpare(ctx, name, c.SpareHosts[0], c.nodeConfig(c.SpareHosts[0], dst), 10*time.Second)
	if err != nil {
		return err
	}
	a.copy = cp
	a.load, err = e.startLoad("ops-"+name, []*Node{n, cp}, []string{NSEtcd, NSRedis, NSZK, NSSegment}, false, time.Minute)
	return err
}

func (a *cloneNode) processIDs() map[string]int { return a.ids }

func (a *cloneNode) End(ctx context.Context, e *Env) error {
	var err error
	a.ids, err = a.load.stop(e)
	if a.copy != nil {
		err = errors.Join(err, a.copy.Proc.Kill(), os.RemoveAll(filepath.Join(e.C.Dir, "data-"+a.copy.Name)))
	}
	if !a.touched {
		return err
	}
	return errors.Join(err, e.restartIfStopped(ctx, e.C.Nodes[a.i], "start after its copy was removed"))
}

// restartIfStopped starts node n again when it is not running: a node may refuse
// to go on beside a copy of its journal (it exits naming the copy), and the rest of
// the schedule needs it, as an operator would start it once the copy is gone.
func (e *Env) restartIfStopped(ctx context.Context, n *Node, why string) error {
	if n.Proc.Running() {
		return nil
	}
	e.C.logf("operations: %s stopped during the fault (%v); starting it again", n.Name, n.Proc.ExitErr())
	return e.startNode(ctx, n, 0, restart{why, 0})
}

// ---- restore-backup, revert-snapshot

// restoreNode copies node i's data directory (a backup, or the disk of a VM
// snapshot), lets the node run on for runOn under a workload of its own, SIGKILLs
// it, puts the copy back in place of its directory and starts it: a restore from
// a backup after a lost disk or a bad upgrade. With clock, the node also starts
// with its clock as far back as the copy is old, as a VM reverted to a snapshot
// does until its clock is synchronised; End then restarts it on the true clock
// (SIGTERM), as that synchronisation would.
type restoreNode struct {
	i      int
	runOn  time.Duration
	clock  bool
	load   *opsLoad
	skewed bool
	ids    map[string]int
}

func (a *restoreNode) Begin(ctx context.Context, e *Env) error {
	c := e.C
	n := c.Nodes[a.i]
	backup := filepath.Join(c.Dir, "backup-"+n.Name)
	if err := copyDir(ctx, n.Data, backup); err != nil {
		return err
	}
	taken := time.Now()
	defer os.RemoveAll(backup)
	var err error
	a.load, err = e.startLoad("ops-restore-"+n.Name, []*Node{n}, []string{NSEtcd, NSRedis, NSZK}, false, a.runOn+time.Minute)
	if err != nil {
		return err
	}
	if !sleepUntil(ctx, taken.Add(a.runOn)) {
		return ctx.Err()
	}
	if err := n.Proc.Kill(); err != nil {
		return err
	}
	if err := copyDir(ctx, backup, n.Data); err != nil {
		return err
	}
	if !a.clock {
		return e.startNode(ctx, n, 0, restart{"SIGKILL, data directory restored from a copy", 0})
	}
	back := time.Since(taken).Round(time.Millisecond)
	a.skewed = true
	c.logf("operations: %s restored from a copy %s old, its clock %s behind", n.Name, back, back)
	return e.startNode(ctx, n, -back, restart{fmt.Sprintf("SIGKILL, reverted to a snapshot (clock %s behind)", back), back})
}

func (a *restoreNode) processIDs() map[string]int { return a.ids }

func (a *restoreNode) End(ctx context.Context, e *Env) error {
	var err error
	a.ids, err = a.load.stop(e)
	n := e.C.Nodes[a.i]
	if a.skewed && n.Proc.Running() {
		err = errors.Join(err, e.restartNode(ctx, n, false, 0,
			restart{"SIGTERM, restart on the true clock after a snapshot's revert", 0}))
	}
	return errors.Join(err, e.restartIfStopped(ctx, n, "start after a restore it refused"))
}

// ---- second-deployment

// secondDeployment starts a server on each spare host, both with the nodes'
// snowflake namespaces and lease stores (so the same scopes) and the same
// `fixed:` value: a second deployment made from the first one's configuration
// (a staging copy pointed at production's store, a second region, a blue-green
// switch that started green before blue stopped). The second must not issue with
// the value the first holds.
type secondDeployment struct {
	value int
	procs []*Node
	load  *opsLoad
	ids   map[string]int
}

func (a *secondDeployment) Begin(ctx context.Context, e *Env) error {
	c := e.C
	for k, h := range c.SpareHosts[:2] {
		name := fmt.Sprintf("deploy%d", k+1)
		data, err := c.spareData(name)
		if err != nil {
			return err
		}
		// The first deployment holds the value before the second starts; the
		// second is loaded whether or not it becomes ready.
		wait := 30 * time.Second
		if k > 0 {
			wait = 0
		}
		n, err := e.startSpare(ctx, name, h, c.fixedConfig(h, data, a.value), wait)
		if err != nil {
			return err
		}
		a.procs = append(a.procs, n)
	}
	var err error
	a.load, err = e.startLoad("ops-deploy", a.procs, []string{NSEtcd, NSRedis, NSZK}, false, time.Minute)
	return err
}

func (a *secondDeployment) processIDs() map[string]int { return a.ids }

func (a *secondDeployment) End(ctx context.Context, e *Env) error {
	var err error
	a.ids, err = a.load.stop(e)
	for _, n := range a.procs {
		err = errors.Join(err, n.Proc.Stop(10*time.Second), os.RemoveAll(filepath.Join(e.C.Dir, "data-"+n.Name)))
	}
	return err
}

// fixedConfig is a server's configuration with the nodes' snowflake namespaces,
// each leasing exactly value from the nodes' stores.
func (c *Cluster) fixedConfig(h *netns.Host, data string, value int) string {
	keys := leaseKeys(c.opt.LeaseTTL, c.opt.Window, c.opt.Budget) + fmt.Sprintf(", fixed: %d", value)
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
    strategy: snowflake
    snowflake:
      lease: {store: "zk://%s/fh?dial_timeout=2s"%s}
`, hostPort(h, FlurryPort), data, NSEtcd, c.EtcdEndpoints(), keys, NSRedis, c.RedisNodeURL(), keys, NSZK, c.ZKServers(), keys)
}

// ---- private-stores

// privateStores starts a server on each spare host with a snowflake namespace on
// flurry's defaults (each leases from the embedded file store in its own data
// directory) and puts both behind Go clients: two servers behind a load balancer,
// or one client configured with both, each server deployed on the defaults.
type privateStores struct {
	procs []*Node
	load  *opsLoad
	ids   map[string]int
}

func (a *privateStores) Begin(ctx context.Context, e *Env) error {
	c := e.C
	for k, h := range c.SpareHosts[:2] {
		name := fmt.Sprintf("private%d", k+1)
		data, err := c.spareData(name)
		if err != nil {
			return err
		}
		body := fmt.Sprintf("listen: %s\ndata_dir: %s\nmax_count: 100000\nshutdown_timeout: 5s\nnamespaces:\n  %s:\n    strategy: snowflake\n",
			hostPort(h, FlurryPort), data, NSPrivate)
		n, err := e.startSpare(ctx, name, h, body, 10*time.Second)
		if err != nil {
			return err
		}
		a.procs = append(a.procs, n)
	}
	var err error
	a.load, err = e.startLoad("ops-private", a.procs, []string{NSPrivate}, true, time.Minute)
	return err
}

func (a *privateStores) processIDs() map[string]int { return a.ids }

func (a *privateStores) End(ctx context.Context, e *Env) error {
	var err error
	a.ids, err = a.load.stop(e)
	for _, n := range a.procs {
		err = errors.Join(err, n.Proc.Stop(10*time.Second), os.RemoveAll(filepath.Join(e.C.Dir, "data-"+n.Name)))
	}
	return err
}

// ---- silent-leaf

// silentLeaf runs a stand-in for a Leaf snowflake server (fhleaf) on the first
// spare host: it registers its address in a Leaf registry on the cluster's
// ZooKeeper as Leaf does, writes its node once and then no more, while it keeps
// answering Leaf's route with IDs of its worker ID: a Leaf server that started
// while ZooKeeper was unreachable (it runs on workerID.properties and never
// writes), whose start check failed (it runs anyway), or whose clock stepped back
// (it skips its writes). flurry then starts on the second spare host with a
// leafzk:// namespace at the stand-in's address, as an operator replacing that
// server would, and must not take the worker ID while the stand-in answers.
type silentLeaf struct {
	name  string // leaf.name: the registry's path
	leaf  *Proc
	taker *Node
	load  *opsLoad
	ids   map[string]int
}

// LeafPort is the port of the stand-in Leaf server.
const LeafPort = FlurryPort

func (a *silentLeaf) Begin(ctx context.Context, e *Env) error {
	c := e.C
	if c.opt.Leaf == "" {
		return errors.New("silent-leaf: Options.Leaf (the fhleaf binary) is not set")
	}
	h := c.SpareHosts[0]
	addr := hostPort(h, LeafPort)
	a.leaf = c.proc("leaf-"+a.name, h, nil, c.opt.Leaf, "-zk", c.ZKServers(), "-name", a.name, "-addr", addr)
	if err := a.leaf.Start(); err != nil {
		return err
	}
	standIn := &Node{Name: "leaf", Host: h, Proc: a.leaf}
	if err := waitHTTP(ctx, c, "http://"+addr+"/api/snowflake/get/fh", 20*time.Second); err != nil {
		return fmt.Errorf("silent-leaf: the stand-in Leaf server: %w (log %s)", err, a.leaf.Log)
	}
	data, err := c.spareData("leaf-taker")
	if err != nil {
		return err
	}
	body := fmt.Sprintf(`listen: %s
data_dir: %s
max_count: 100000
shutdown_timeout: 5s
namespaces:
  %s:
    strategy: snowflake
    snowflake:
      layout: leaf
      lease: {store: "leafzk://%s/%s?addr=%s"}
`, hostPort(c.SpareHosts[1], FlurryPort), data, NSLeaf, c.ZKServers(), a.name, addr)
	// Both workloads start before flurry is ready: flurry may wait out `fresh`
	// first, and the IDs that matter are those after.
	a.taker = &Node{Name: "leaf-taker", Host: c.SpareHosts[1]}
	a.load, err = e.startLoad("ops-leaf", []*Node{standIn, a.taker}, []string{NSLeaf}, false, time.Minute)
	if err != nil {
		return err
	}
	a.taker, err = e.startSpare(ctx, "leaf-taker", c.SpareHosts[1], body, 0)
	return err
}

func (a *silentLeaf) processIDs() map[string]int { return a.ids }

func (a *silentLeaf) End(ctx context.Context, e *Env) error {
	var err error
	a.ids, err = a.load.stop(e)
	if a.taker != nil && a.taker.Proc != nil {
		err = errors.Join(err, a.taker.Proc.Stop(10*time.Second), os.RemoveAll(filepath.Join(e.C.Dir, "data-leaf-taker")))
	}
	if a.leaf != nil {
		err = errors.Join(err, a.leaf.Stop(5*time.Second))
	}
	return err
}

// waitHTTP waits until url answers 200 from the first client host.
func waitHTTP(ctx context.Context, c *Cluster, url string, d time.Duration) error {
	hc := httpClient(c.ClientHosts[0], time.Second)
	deadline := time.Now().Add(d)
	for {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// opsKindDoc says, for the report, what an operations kind does and which
// operator's action it stands for.
func opsKindDoc(kind string) (does, mimics string) {
	switch kind {
	case "clone-crashed":
		return "SIGKILLs a node, copies its data directory (`cp -a`), starts the node again on its own directory and a " +
				"second `flurry serve` on the copy (spare host s1, same configuration); both are loaded for the fault's length.",
			"Provisioning a server from a clone: a VM or volume clone, a golden image with a data directory in it, a " +
				"Kubernetes VolumeSnapshot restored as a new pod's volume, `cp -a` of a crashed server's directory."
	case "clone-running":
		return "Copies a running node's data directory and starts a second server on the copy (spare host s1) while the " +
				"node runs on; both are loaded.",
			"A live clone: a VM cloned while it runs, a volume snapshot of a running server, rsync of a live data directory to a new host."
	case "restore-backup":
		return "Copies a node's data directory, lets the node run on 8–10 s under load, SIGKILLs it, puts the copy back in place " +
				"of its directory and starts it on the true clock.",
			"Restoring a server's disk from a backup after a lost disk, a bad upgrade or a mistaken `rm`."
	case "revert-snapshot":
		return "As restore-backup, and the node starts with its clock as far behind as the copy is old (`FLURRY_CLOCK_SKEW`); " +
				"at the fault's end it restarts on the true clock (SIGTERM).",
			"Reverting a VM to a snapshot: disk and clock come back together, and the clock stays behind until it synchronises."
	case "second-deployment":
		return "Starts a server on each spare host with the nodes' snowflake namespaces and lease stores (the same scopes) " +
				"and one `fixed:` value, the second after the first holds it; both are loaded.",
			"A second deployment made from the first one's configuration: a staging copy pointed at production's store, " +
				"a second region, a blue-green switch that starts green before blue stops."
	case "private-stores":
		return "Starts a server on each spare host with a snowflake namespace on flurry's defaults (each leases from the " +
				"embedded file store in its own data directory) and puts two Go clients in front of both (one given s1 then s2, the other s2 then s1).",
			"Two servers deployed on the defaults behind one load balancer or one client's server list, each with its own volume."
	case "silent-leaf":
		return "Runs a stand-in Leaf snowflake server (`verify/harness/cmd/fhleaf`) that registers its address in a Leaf " +
				"registry on the cluster's ZooKeeper, writes its node once and never again while it answers " +
				"`/api/snowflake/get/{key}`; then flurry with a `leafzk://` namespace at that address (spare host s2). Both are loaded for 24–27 s.",
			"Replacing a Leaf server by flurry at its address while that Leaf still runs without writing its node: it started " +
				"while ZooKeeper was down (on workerID.properties), its start check failed (it runs anyway), or its clock stepped back."
	}
	return "", ""
}
