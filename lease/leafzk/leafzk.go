package leafzk

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/internal/zkconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// leafInterval is how often a Leaf server writes its node's timestamp:
// SnowflakeZookeeperHolder.ScheduledUploadData runs every 3 s after the end of
// the previous write (scheduleWithFixedDelay).
const leafInterval = 3 * time.Second

// Defaults of Options.Margin and Options.Fresh.
const (
	DefaultMargin = 10 * time.Second
	DefaultFresh  = 10 * time.Second
)

// Options configures a Store. ZK.Servers and Name are required, and Acquire needs
// one of Addr and Replace (List does not); the zero value of every other field is
// a documented default.
type Options struct {
	// ZK is the connection to the ensemble: Servers, DialTimeout, RequestTimeout,
	// SessionTimeout (zkconn.Options). Its Prefix is ignored: the store works in
	// Leaf's tree, /snowflake/{Name}.
	ZK zkconn.Options
	// Name is Leaf's leaf.name: the registry is /snowflake/{Name}/forever, and
	// flurry's own records of the worker IDs it holds are under
	// /snowflake/{Name}/flurry, where Leaf does not look.
	Name string
	// Addr is the ip:port this server is known by in Leaf's registry, as Leaf
	// registers a server listening there: Acquire takes the worker ID of the
	// node of that address, and registers one, as Leaf would, when there is none.
	// In place of a Leaf server, give that server's address.
	Addr string
	// Replace, instead of Addr, names the ip:port of a Leaf server whose node
	// Acquire takes over, from a server that listens elsewhere. It never
	// registers a node.
	Replace string
	// Margin is how far above a Leaf server's last recorded timestamp flurry
	// starts when it takes the server's node: it must cover the IDs that server
	// issued after the write it recorded last (the 3 s between its writes, the
	// time those writes took, pauses of its JVM, and a step forward of its clock in
	// that time). From 3s to 1h; zero means DefaultMargin (10s). See the package
	// documentation.
	Margin time.Duration
	// Fresh is how long a node last written by a Leaf server must have been left
	// alone, by ZooKeeper's clock, before flurry takes it: while it is younger,
	// its server may be running. From 5s (Leaf's 3 s between writes, plus a
	// write) to 1h; zero means DefaultFresh (10s).
	Fresh time.Duration
	// ProbePort is the port at which the probe asks a Leaf node's IP whether a
	// server runs there, when Leaf's HTTP port (server.port) is not the port it
	// registers (leaf.snowflake.port). Zero means the registered port.
	ProbePort int
	// ProbeTimeout bounds each connect and each answer of the probe; zero means
	// DefaultProbeTimeout (2s). An address that does not accept a connection
	// within it counts as having no server.
	ProbeTimeout time.Duration
	// NoProbe turns the probe off: the store then judges a Leaf node by its age
	// alone, and doubles a Leaf server that runs without writing its node (see
	// the package documentation). Unsafe; for registries whose Leaf servers
	// flurry cannot reach.
	NoProbe bool
	// Clock is the clock of the timestamps flurry writes into the nodes it holds,
	// as Leaf writes its own clock's; it should be the generator's. Nil means
	// clock.NewSystem().
	Clock clock.Clock
}

// check validates o and fills in the defaults.
func (o *Options) check() error {
	if o.Name == "" {
		return errors.New("give Leaf's leaf.name (Options.Name)")
	}
	for _, c := range o.Name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.:=", c)) {
			return fmt.Errorf("leaf.name %q: flurry takes letters, digits and _-.:= in it", o.Name)
		}
	}
	switch {
	case o.Addr != "" && o.Replace != "":
		return errors.New("give addr= or replace=, not both: addr is this server's own node, replace another server's")
	}
	for _, a := range []string{o.Addr, o.Replace} {
		if a != "" {
			if _, _, err := checkAddr(a); err != nil {
				return err
			}
		}
	}
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	if o.Fresh == 0 {
		o.Fresh = DefaultFresh
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.ProbeTimeout < 0 || o.ProbeTimeout > time.Minute {
		return fmt.Errorf("probe_timeout %v must be from 1ns to 1m", o.ProbeTimeout)
	}
	if o.ProbePort < 0 || o.ProbePort > 65535 {
		return fmt.Errorf("probe_port %d must be from 1 to 65535", o.ProbePort)
	}
	if o.Margin < minMargin || o.Margin > maxMargin {
		return fmt.Errorf("margin %v must be from %v (Leaf writes its timestamp every %v) to %v", o.Margin, minMargin, leafInterval, maxMargin)
	}
	if o.Fresh < minFresh || o.Fresh > maxMargin {
		return fmt.Errorf("fresh %v must be from %v (Leaf writes its timestamp every %v, after its last write) to %v", o.Fresh, minFresh, leafInterval, maxMargin)
	}
	return nil
}

// Store is a lease.Store on Leaf's ZooKeeper registry. It is safe for concurrent
// use.
type Store struct {
	conn    *zkconn.Conn
	o       Options
	target  string // the address whose node Acquire takes: Replace or Addr
	root    string // /snowflake/{Name}
	forever string // root + "/forever": Leaf's registry
	meta    string // root + "/flurry": flurry's records; written to read ZooKeeper's clock

	bg     context.Context // the renewal probes'; ends with Close
	stopBg context.CancelFunc
	wg     sync.WaitGroup // the renewal probes running

	mu        sync.Mutex
	listening string           // SetListening's address
	watches   map[int64]*watch // the renewal probes, by worker ID
}

var _ lease.Store = (*Store)(nil)

func kind() zkconn.Kind {
	return zkconn.Kind{Package: "lease/leafzk", DefaultPrefix: "snowflake"}
}

// Open connects to the ensemble o names and returns a store that closes the
// connection on Close. It fails when no member answers within o.ZK.DialTimeout:
// a server that cannot reach Leaf's registry does not start (see the package
// documentation, "ZooKeeper down at start").
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("lease/leafzk: %w", err)
	}
	if o.Clock == nil {
		o.Clock = clock.NewSystem()
	}
	o.ZK.Prefix = "snowflake/" + o.Name
	c, err := zkconn.Open(ctx, o.ZK, kind())
	if err != nil {
		return nil, err
	}
	s := &Store{conn: c, o: o, target: o.Addr, root: c.Prefix, forever: c.Prefix + "/forever", meta: c.Prefix + "/flurry",
		watches: map[int64]*watch{}}
	s.bg, s.stopBg = context.WithCancel(context.Background())
	if o.Replace != "" {
		s.target = o.Replace
	}
	return s, nil
}

// Close ends the renewal probes and closes the connection. It does not release
// leases.
func (s *Store) Close() error {
	s.stopBg()
	s.wg.Wait()
	return s.conn.Close()
}

// errorf starts an error of the store with its package.
func (s *Store) errorf(format string, a ...any) error {
	return fmt.Errorf("lease/leafzk: "+format, a...)
}

// badConfig is an error that retrying cannot cure: it matches lease.ErrBadConfig.
func (s *Store) badConfig(format string, a ...any) error {
	return fmt.Errorf("%w: %w", lease.ErrBadConfig, fmt.Errorf("lease/leafzk: "+format, a...))
}

// record is the data of flurry's node for one worker ID, /snowflake/{name}/flurry/{id}:
// the lease and its mark, and what flurry knows of the worker's Leaf node.
type record struct {
	Scope string `json:"scope,omitempty"`
	Owner string `json:"owner,omitempty"`
	// Token is the live lease's; empty when no holder has it.
	Token string `json:"token,omitempty"`
	// TTL is the lease's, in milliseconds: it expires TTL after the record's last
	// write (its Mtime), by ZooKeeper's clock.
	TTL int64 `json:"ttl_ms,omitempty"`
	// Mark is the worker ID's high-water mark in Unix milliseconds.
	Mark int64 `json:"mark"`
	// Node names the worker's Leaf node, "10.0.0.5:8080-0000000003".
	Node string `json:"node"`
	// Expect is the version of the Leaf node the holder's next write must find:
	// the one it saw when it claimed the worker ID, then the one its last write
	// made. A write of anyone else (a Leaf server) in between fails the holder's.
	Expect int32 `json:"expect"`
	// Written is the Leaf node's version after the last write of a flurry
	// holder, -1 when none wrote it. When it is still the node's version, the
	// node's timestamp is flurry's, covered by Mark; else a Leaf server wrote it.
	Written int32 `json:"written"`
	// Stamp is the highest timestamp written into the Leaf node that flurry
	// knows of: timestamps flurry writes never go below it.
	Stamp int64 `json:"stamp"`
	// Epoch counts the record's writes by claims, renewals and takeovers
	// (lease.Lease.Epoch); release and disowning keep it.
	Epoch int64 `json:"epoch,omitempty"`
}

func (s *Store) recPath(v int64) string      { return s.meta + "/" + strconv.FormatInt(v, 10) }
func (s *Store) leafPath(name string) string { return s.forever + "/" + name }

// A zkClock is one reading of ZooKeeper's clock: the mtime of a write, the wall
// clock of the leader that committed it, with that leader's epoch. Leases expire,
// and Leaf nodes count as left alone, by it, so that no flurry or Leaf host's
// clock counts; and no mtime is compared with another leader's (see since).
type zkClock struct {
	now, epoch int64
	// start is the earliest reading kept of this epoch's leader, which comes after
	// every write committed under earlier leaders; 0 until needed.
	start int64
}

const metaData = "flurry's records of the worker IDs it holds in Leaf's registry"

// zkNow reads ZooKeeper's clock with a write to the meta node, which it creates
// (with the registry's parents) when missing.
func (s *Store) zkNow(ctx context.Context) (*zkClock, error) {
	st, err := s.conn.Set(ctx, s.meta, []byte(metaData), -1)
	if errors.Is(err, zk.ErrNoNode) {
		if err := s.conn.CreatePath(ctx, s.meta); err != nil {
			return nil, err
		}
		st, err = s.conn.Set(ctx, s.meta, []byte(metaData), -1)
	}
	if err != nil {
		return nil, err
	}
	return &zkClock{now: st.Mtime, epoch: zkconn.Epoch(st.Mzxid)}, nil
}

// since returns when a node was last written, by the clock c reads: its mtime
// when the leader that committed the write is c's; else, for a write of an
// earlier leader, the first reading kept of c's leader, which comes after it (a
// later time: the node seems younger, so a lease lives longer and a Leaf node
// stays fresh longer, never shorter); and for a write of a later leader than c's,
// c's reading itself.
func (s *Store) since(ctx context.Context, c *zkClock, st *zk.Stat) (int64, error) {
	switch e := zkconn.Epoch(st.Mzxid); {
	case e == c.epoch:
		return st.Mtime, nil
	case e > c.epoch:
		return c.now, nil
	}
	if c.start != 0 {
		return c.start, nil
	}
	p := s.meta + "/" + epochNode
	for range rounds {
		data, est, err := s.conn.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			if _, err := s.conn.Create(ctx, p, nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		var e, t int64
		if _, err := fmt.Sscanf(string(data), "%d %d", &e, &t); err == nil && e == c.epoch && t > 0 {
			c.start = t
			return t, nil
		}
		// The first reading of this leader that anyone keeps. A later one would
		// be as safe, only slower to count old writes as old.
		_, err = s.conn.Set(ctx, p, fmt.Appendf(nil, "%d %d", c.epoch, c.now), est.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return 0, err
		}
		c.start = c.now
		return c.now, nil
	}
	c.start = c.now
	return c.now, nil
}

// epochNode, under the meta node, keeps the first reading of the current
// leader's clock: "epoch millis". Its name is no worker ID.
const epochNode = "epoch"

// nodes lists Leaf's registry, by worker ID. A child that is not Leaf's
// {ip}:{port}-{number} is skipped: no Leaf server can hold a worker ID with it
// (Leaf's servers fail to start on such a registry; remove the node).
func (s *Store) nodes(ctx context.Context) ([]leafNode, error) {
	names, err := s.conn.Children(ctx, s.forever)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]leafNode, 0, len(names))
	for _, name := range names {
		n, err := parseNodeName(name)
		if err != nil {
			continue
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b leafNode) int { return int(a.seq - b.seq) })
	return out, nil
}

// register creates this server's node as Leaf does (a persistent sequential node
// forever/{ip}:{port}-, its Endpoint as data), creating the registry when missing.
func (s *Store) register(ctx context.Context) (leafNode, error) {
	ip, port, _ := checkAddr(s.o.Addr)
	addr := leafAddr(ip, port)
	data := endpoint{IP: ip, Port: port, Timestamp: s.nowMilli()}.marshal()
	path, err := s.conn.Create(ctx, s.forever+"/"+addr+"-", data, zk.FlagSequence)
	if errors.Is(err, zk.ErrNoNode) {
		if err := s.conn.CreatePath(ctx, s.forever); err != nil {
			return leafNode{}, err
		}
		path, err = s.conn.Create(ctx, s.forever+"/"+addr+"-", data, zk.FlagSequence)
	}
	if err != nil {
		return leafNode{}, fmt.Errorf("registering %s in %s: %w", addr, s.forever, err)
	}
	return parseNodeName(path[strings.LastIndexByte(path, '/')+1:])
}

func (s *Store) nowMilli() int64 { return s.o.Clock.Now() / int64(time.Millisecond) }

// targetAddr is the address Acquire looks for, as Leaf writes it.
func (s *Store) targetAddr() string {
	ip, port, _ := checkAddr(s.target) // checked by Open
	return leafAddr(ip, port)
}

// Acquire takes the worker ID of this server's node in Leaf's registry (Addr's,
// which it registers as Leaf would when there is none, or Replace's); see
// lease.Store. Every scope shares the registry's one worker space. It returns an
// error wrapping lease.ErrNoFreeValue while another flurry server holds the
// worker ID, or while a Leaf server may (its node was written less than Fresh
// ago), and one matching lease.ErrBadConfig when the worker ID is 1024 or more
// (Leaf's worker field has 10 bits) or outside the pool of size.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	if s.target == "" {
		return lease.Lease{}, s.badConfig("give addr= (the ip:port this server is known by in Leaf's registry) or replace= (the ip:port of the Leaf server whose node it takes over)")
	}
	if size > 1<<leafWorkerBits {
		return lease.Lease{}, s.badConfig("a pool of %d values; Leaf's worker IDs have %d bits: use Leaf's layout (preset leaf)", size, leafWorkerBits)
	}
	nodes, err := s.nodes(ctx)
	if err != nil {
		return lease.Lease{}, s.errorf("reading %s: %w", s.forever, err)
	}
	addr := s.targetAddr()
	var n *leafNode
	for i := range nodes {
		if nodes[i].addr == addr {
			n = &nodes[i] // the lowest number, if the address has several
			break
		}
	}
	created := false
	if n == nil {
		if s.o.Replace != "" {
			return lease.Lease{}, s.badConfig("no node of %s in %s to take over (replace=); its nodes are of %s", addr, s.forever, addrs(nodes))
		}
		reg, err := s.register(ctx)
		if err != nil {
			return lease.Lease{}, s.errorf("%w", err)
		}
		n, created = &reg, true
	}
	if n.seq >= size {
		return lease.Lease{}, s.badConfig("%s/%s gives worker ID %d; Leaf's worker field holds 0 to %d (the pool 0 to %d): the registry has given out every worker ID; take over the node of a server that is gone for good with replace=ip:port", s.forever, n.name, n.seq, 1<<leafWorkerBits-1, size-1)
	}
	return s.claim(ctx, scope, *n, owner, ttl, created)
}

// AcquireValue takes over the Leaf node whose worker ID is value, whatever its
// address; see Acquire and lease.Store. It never registers a node.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	if value >= 1<<leafWorkerBits {
		return lease.Lease{}, s.badConfig("worker ID %d: Leaf's worker field holds 0 to %d", value, 1<<leafWorkerBits-1)
	}
	nodes, err := s.nodes(ctx)
	if err != nil {
		return lease.Lease{}, s.errorf("reading %s: %w", s.forever, err)
	}
	for _, n := range nodes {
		if n.seq == value {
			return s.claim(ctx, scope, n, owner, ttl, false)
		}
	}
	return lease.Lease{}, s.badConfig("no node in %s has worker ID %d; its nodes are of %s", s.forever, value, addrs(nodes))
}

func addrs(nodes []leafNode) string {
	if len(nodes) == 0 {
		return "no server yet"
	}
	var b strings.Builder
	for i, n := range nodes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (worker %d)", n.addr, n.seq)
	}
	return b.String()
}

// state is what the store reads of one worker ID: its Leaf node and its record.
type state struct {
	leaf    *zk.Stat // nil when the worker has no Leaf node
	ep      endpoint
	epErr   error
	rec     record
	recStat *zk.Stat // nil when flurry never held the worker ID
}

// read reads the Leaf node name and the record of worker ID v.
func (s *Store) read(ctx context.Context, name string, v int64) (state, error) {
	paths := []string{s.recPath(v)}
	if name != "" {
		paths = append(paths, s.leafPath(name))
	}
	got, err := s.conn.GetAll(ctx, paths)
	if err != nil {
		return state{}, err
	}
	var st state
	if got[0].Stat != nil {
		if err := json.Unmarshal(got[0].Data, &st.rec); err != nil {
			return state{}, fmt.Errorf("%s holds %q, not flurry's record of a worker ID: it was not written by flurry; delete it only if no flurry server uses this registry", got[0].Path, clip(got[0].Data))
		}
		st.recStat = got[0].Stat
	}
	if name != "" && got[1].Stat != nil {
		st.leaf = got[1].Stat
		st.ep, st.epErr = parseEndpoint(got[1].Data)
	}
	return st, nil
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// held reports whether a flurry lease holds the record by the clock c reads, and
// until when.
func (s *Store) held(ctx context.Context, c *zkClock, st *state) (bool, int64, error) {
	if st.recStat == nil || st.rec.Token == "" {
		return false, 0, nil
	}
	t, err := s.since(ctx, c, st.recStat)
	return t+st.rec.TTL > c.now, t + st.rec.TTL, err
}

// leafLive reports whether the worker's Leaf node has been left alone for less
// than Fresh by the clock c reads, and until when it counts as written. With
// trust, a node that flurry wrote last never counts as live. A claim trusts that
// only for this server's own address: flurry's record saying that flurry wrote
// last does not mean that no Leaf server started there since (one whose start
// check failed, or that started without ZooKeeper, runs without writing).
func (s *Store) leafLive(ctx context.Context, c *zkClock, st *state, name string, trust bool) (bool, int64, error) {
	if st.leaf == nil || trust && st.flurrys(name) {
		return false, 0, nil
	}
	t, err := s.since(ctx, c, st.leaf)
	return c.now-t < s.o.Fresh.Milliseconds(), t + s.o.Fresh.Milliseconds(), err
}

// flurrys reports whether the Leaf node's timestamp was written by a flurry
// holder (or the node made by one), and no Leaf server wrote it since.
func (st *state) flurrys(name string) bool {
	return st.leaf != nil && name != "" && st.rec.Node == name && st.rec.Written == st.leaf.Version
}

// floor is the mark of the worker ID that a new holder starts above: the
// record's, and above the Leaf node's timestamp; by Margin more when a Leaf
// server wrote it, whose IDs may run that far past its last write.
func (st *state) floor(name string, margin time.Duration) int64 {
	m := st.rec.Mark
	if st.leaf != nil && st.epErr == nil {
		if st.flurrys(name) {
			m = max(m, st.ep.Timestamp)
		} else {
			m = max(m, st.ep.Timestamp+margin.Milliseconds())
		}
	}
	return m
}

// claim takes worker ID n.seq for a new lease: when no flurry lease holds it,
// and its Leaf node was last written by flurry or has been left alone for Fresh
// (created: this store has just registered it). The write checks that neither
// the record nor the Leaf node changed since they were read.
func (s *Store) claim(ctx context.Context, scope string, n leafNode, owner string, ttl time.Duration, created bool) (lease.Lease, error) {
	c, err := s.zkNow(ctx)
	if err != nil {
		return lease.Lease{}, s.errorf("acquire worker %d: %w", n.seq, err)
	}
	st, err := s.read(ctx, n.name, n.seq)
	if err != nil {
		return lease.Lease{}, s.errorf("acquire worker %d: %w", n.seq, err)
	}
	if st.leaf == nil {
		return lease.Lease{}, s.errorf("acquire worker %d: %s was deleted while being read; trying again", n.seq, s.leafPath(n.name))
	}
	if st.epErr != nil {
		return lease.Lease{}, s.badConfig("%s: %v; Leaf's server cannot start on it either: fix its data or delete the node", s.leafPath(n.name), st.epErr)
	}
	held, _, err := s.held(ctx, c, &st)
	if err != nil {
		return lease.Lease{}, s.errorf("acquire worker %d: %w", n.seq, err)
	}
	if held {
		return lease.Lease{}, fmt.Errorf("lease/leafzk: worker %d (%s) is held by flurry server %s, whose lease ends %v after its last renewal: %w", n.seq, n.addr,
			st.rec.Owner, time.Duration(st.rec.TTL)*time.Millisecond, lease.ErrNoFreeValue)
	}
	written := int32(-1)
	if st.recStat != nil && st.rec.Node == n.name {
		written = st.rec.Written
	}
	if created && st.leaf.Version == 0 {
		written = 0 // made by this store: no Leaf server ever wrote it
	}
	st.rec.Written, st.rec.Node = written, n.name // leafLive and floor read them
	target := s.probeTarget(n.addr)
	own := s.own(target)
	live, _, err := s.leafLive(ctx, c, &st, n.name, own || created)
	if err != nil {
		return lease.Lease{}, s.errorf("acquire worker %d: %w", n.seq, err)
	}
	if live {
		// The message stays the same while the node is fresh, so that a session
		// logs it once.
		return lease.Lease{}, fmt.Errorf("lease/leafzk: worker %d: %s was written less than %v ago (fresh=), by ZooKeeper's clock, so the Leaf server at %s may be running; flurry takes its worker ID once the node has been left alone that long: stop that server: %w",
			n.seq, s.leafPath(n.name), s.o.Fresh, n.addr, lease.ErrNoFreeValue)
	}
	if !created && !own && !s.o.NoProbe {
		// The node's age does not show a Leaf server that runs without writing
		// it: ask its address.
		what, how, err := probe(ctx, target, s.o.ProbeTimeout)
		if err != nil {
			return lease.Lease{}, s.errorf("acquire worker %d: asking %s whether a Leaf server runs there: %w", n.seq, target, err)
		}
		if what == aLeaf {
			return lease.Lease{}, fmt.Errorf("lease/leafzk: worker %d: a server runs at %s (it %s), the address of %s: a Leaf server that does not write its node (it started while ZooKeeper was unreachable, or its start check failed, or its clock stepped back) still issues with worker ID %d, so flurry does not take it: stop that server (probe=off skips this check, and doubles such a server): %w",
				n.seq, target, how, s.leafPath(n.name), n.seq, lease.ErrNoFreeValue)
		}
	}
	mark := st.floor(n.name, s.o.Margin)
	token := rand.Text()
	nr := record{Scope: scope, Owner: owner, Token: token, TTL: ttl.Milliseconds(), Mark: mark, Node: n.name,
		Expect: st.leaf.Version, Written: written, Stamp: max(st.rec.Stamp, st.ep.Timestamp), Epoch: st.rec.Epoch + 1}
	data, _ := json.Marshal(nr)
	var op any = &zk.CreateRequest{Path: s.recPath(n.seq), Data: data, Acl: zk.WorldACL(zk.PermAll)}
	if st.recStat != nil {
		op = &zk.SetDataRequest{Path: s.recPath(n.seq), Data: data, Version: st.recStat.Version}
	}
	rs, err := s.conn.Multi(ctx, &zk.CheckVersionRequest{Path: s.leafPath(n.name), Version: st.leaf.Version}, op)
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrNoNode):
		what := "flurry's record of it"
		if len(rs) > 0 && rs[0].Error != nil {
			what = "its Leaf node " + s.leafPath(n.name)
		}
		return lease.Lease{}, fmt.Errorf("lease/leafzk: worker %d: %s changed while it was being claimed (another server took it, or a Leaf server wrote its node): %w", n.seq, what, lease.ErrNoFreeValue)
	default:
		return lease.Lease{}, s.errorf("acquire worker %d: %w", n.seq, err)
	}
	exp := c.now + nr.TTL
	if len(rs) > 1 && rs[1].Stat != nil {
		exp = rs[1].Stat.Mtime + nr.TTL
	}
	s.claimed(n.seq, token)
	return lease.Lease{Scope: scope, Value: n.seq, Owner: owner, Token: token, Mark: mark, Expires: time.UnixMilli(exp).UTC(), Epoch: nr.Epoch}, nil
}

// rounds bounds the read-and-write attempts of Renew and Release when the record
// changes between the read and the write (an acquirer's failed claim does not
// change it; so only a lease that expired and was taken, which then ends them).
const rounds = 4

// Renew extends a lease, raises the worker ID's mark and writes the timestamp
// of the worker's Leaf node, as the Leaf server would every 3 s, in one
// transaction that checks that no one else wrote the node since this holder's
// last write; see lease.Store. A lease that expired but that no one took since
// is renewed: no one else issued with its worker ID. It returns an error
// wrapping lease.ErrLost when the lease is not l's anymore, and when a Leaf
// server wrote the node (one started at its address): then the lease is
// released at once, keeping the mark, and the next Acquire waits until that
// server has stopped.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTTL(ttl); err != nil {
		return lease.Lease{}, err
	}
	for range rounds {
		st, err := s.read(ctx, "", l.Value)
		if err != nil {
			return lease.Lease{}, s.errorf("renew worker %d: %w", l.Value, err)
		}
		if st.recStat == nil || st.rec.Token == "" || st.rec.Token != l.Token {
			s.unwatch(l.Value)
			return lease.Lease{}, s.errorf("renew worker %d: %w (another holder has it, or it was released)", l.Value, lease.ErrLost)
		}
		if found := s.watching(ctx, l.Value, l.Token); found != "" {
			s.disown(ctx, l.Value, st)
			s.unwatch(l.Value)
			return lease.Lease{}, s.errorf("renew worker %d: %s: %w", l.Value, found, lease.ErrLost)
		}
		nr := st.rec
		nr.TTL, nr.Mark = ttl.Milliseconds(), max(st.rec.Mark, mark)
		mtime, err := s.rewrite(ctx, l.Value, st, nr)
		switch {
		case err == nil:
			l.Mark, l.Expires, l.Epoch = nr.Mark, time.UnixMilli(mtime+nr.TTL).UTC(), st.rec.Epoch+1
			return l, nil
		case errors.Is(err, errLeafWrote):
			return lease.Lease{}, s.errorf("renew worker %d: %v: both issuing with one worker ID would repeat IDs, so this server stops and waits until that one stops: %w", l.Value, err, lease.ErrLost)
		case errors.Is(err, zk.ErrBadVersion):
			continue // the record changed: read again
		default:
			return lease.Lease{}, s.errorf("renew worker %d: %w", l.Value, err)
		}
	}
	return lease.Lease{}, s.errorf("renew worker %d: the record kept changing: %w", l.Value, lease.ErrLost)
}

// Takeover replaces the live lease l with a lease of a new token for owner, in
// one transaction that checks that the record still holds l's token and that no
// one else wrote the worker's Leaf node since flurry's last write, and writes the
// node's timestamp as Renew does; see lease.Store. The new lease's Mark is the
// worker ID's mark before this call. It returns an error wrapping lease.ErrLost
// when l expired (by ZooKeeper's clock) or is not the live lease, and when a Leaf
// server wrote the node or answers at its address (see Renew); then nothing
// changes but that the lease is given up, as Renew gives it up.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	for range rounds {
		c, err := s.zkNow(ctx)
		if err != nil {
			return lease.Lease{}, s.errorf("take over worker %d: %w", l.Value, err)
		}
		st, err := s.read(ctx, "", l.Value)
		if err != nil {
			return lease.Lease{}, s.errorf("take over worker %d: %w", l.Value, err)
		}
		if st.recStat == nil || st.rec.Token == "" || st.rec.Token != l.Token {
			return lease.Lease{}, s.errorf("take over worker %d: %w (another holder has it, or it was released)", l.Value, lease.ErrLost)
		}
		held, _, err := s.held(ctx, c, &st)
		if err != nil {
			return lease.Lease{}, s.errorf("take over worker %d: %w", l.Value, err)
		}
		if !held {
			return lease.Lease{}, s.errorf("take over worker %d: %w (the lease expired)", l.Value, lease.ErrLost)
		}
		token := rand.Text()
		// A lease resumed from a journal: ask the node's address before issuing
		// with it, as a claim does.
		if found := s.watching(ctx, l.Value, token); found != "" {
			s.disown(ctx, l.Value, st)
			s.unwatch(l.Value)
			return lease.Lease{}, s.errorf("take over worker %d: %s: %w", l.Value, found, lease.ErrLost)
		}
		nr := st.rec
		nr.Owner, nr.Token, nr.TTL, nr.Mark = owner, token, ttl.Milliseconds(), max(st.rec.Mark, mark)
		mtime, err := s.rewrite(ctx, l.Value, st, nr)
		switch {
		case err == nil:
			return lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: token, Mark: st.rec.Mark,
				Expires: time.UnixMilli(mtime + nr.TTL).UTC(), Epoch: st.rec.Epoch + 1}, nil
		case errors.Is(err, errLeafWrote):
			return lease.Lease{}, s.errorf("take over worker %d: %v: %w", l.Value, err, lease.ErrLost)
		case errors.Is(err, zk.ErrBadVersion):
			continue // the record changed: read again
		default:
			return lease.Lease{}, s.errorf("take over worker %d: %w", l.Value, err)
		}
	}
	return lease.Lease{}, s.errorf("take over worker %d: the record kept changing: %w", l.Value, lease.ErrLost)
}

// errLeafWrote is rewrite's error when someone else wrote the worker's Leaf node
// since flurry's last write to it: a Leaf server started at its address, most
// likely.
var errLeafWrote = errors.New("the Leaf node was written by another process")

// rewrite writes nr, the next version of worker v's record read as st, and the
// timestamp of the worker's Leaf node, in one transaction that fails if either
// changed since st. It stamps nr (the clock, the node's expected version, the
// epoch). It returns the record's new modification time; an error wrapping
// errLeafWrote, having disowned the lease, when someone else wrote the Leaf node;
// one wrapping zk.ErrBadVersion when only the record changed (read it again).
func (s *Store) rewrite(ctx context.Context, v int64, st state, nr record) (int64, error) {
	nr.Stamp = max(st.rec.Stamp, s.nowMilli())
	nr.Expect, nr.Written = st.rec.Expect+1, st.rec.Expect+1
	nr.Epoch = st.rec.Epoch + 1
	ep, err := s.endpointOf(nr.Node, nr.Stamp)
	if err != nil {
		return 0, err
	}
	data, _ := json.Marshal(nr)
	rs, err := s.conn.Multi(ctx,
		&zk.SetDataRequest{Path: s.leafPath(nr.Node), Data: ep, Version: st.rec.Expect},
		&zk.SetDataRequest{Path: s.recPath(v), Data: data, Version: st.recStat.Version})
	switch {
	case err == nil:
		return rs[1].Stat.Mtime, nil
	case len(rs) == 2 && rs[0].Error != nil && (errors.Is(rs[0].Error, zk.ErrBadVersion) || errors.Is(rs[0].Error, zk.ErrNoNode)):
		s.disown(ctx, v, st)
		s.unwatch(v)
		return 0, fmt.Errorf("%s: %w, a Leaf server started at %s most likely", s.leafPath(nr.Node), errLeafWrote, addrOf(nr.Node))
	}
	return 0, err
}

// disown ends a lease whose Leaf node someone else wrote: the token goes, the
// mark stays, and the node counts as a Leaf server's from now on. Best effort: if
// it fails the lease expires after its TTL.
func (s *Store) disown(ctx context.Context, v int64, st state) {
	nr := st.rec
	nr.Token, nr.Owner = "", ""
	data, _ := json.Marshal(nr)
	s.conn.Set(ctx, s.recPath(v), data, st.recStat.Version)
}

// endpointOf is the data flurry writes into Leaf node name: the node's own
// address, as its server would write it, and the timestamp.
func (s *Store) endpointOf(name string, ts int64) ([]byte, error) {
	n, err := parseNodeName(name)
	if err != nil {
		return nil, s.errorf("%s: %v", s.leafPath(name), err)
	}
	i := strings.LastIndexByte(n.addr, ':')
	if i < 0 {
		return nil, s.errorf("%s: the node's name has no port", s.leafPath(name))
	}
	return endpoint{IP: n.addr[:i], Port: n.addr[i+1:], Timestamp: ts}.marshal(), nil
}

func addrOf(name string) string {
	n, err := parseNodeName(name)
	if err != nil {
		return name
	}
	return n.addr
}

// Release ends a lease and sets the worker ID's mark to mark; see lease.Store.
// When flurry wrote the Leaf node last, it writes the node's timestamp once more,
// to mark+1 (or the last timestamp, if higher): a Leaf server started at the
// node's address later then passes its start check (the timestamp is behind its
// clock) and issues above every ID flurry issued, as it does after a restart of
// its own.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	s.unwatch(l.Value)
	for range rounds {
		st, err := s.read(ctx, "", l.Value)
		if err != nil {
			return s.errorf("release worker %d: %w", l.Value, err)
		}
		if st.recStat == nil || st.rec.Token == "" || st.rec.Token != l.Token {
			return s.errorf("release worker %d: %w", l.Value, lease.ErrLost)
		}
		nr := st.rec
		nr.Token, nr.Owner, nr.Mark = "", "", mark
		recOp := func() *zk.SetDataRequest {
			data, _ := json.Marshal(nr)
			return &zk.SetDataRequest{Path: s.recPath(l.Value), Data: data, Version: st.recStat.Version}
		}
		if st.rec.Written == st.rec.Expect {
			// This holder (or an earlier flurry holder) wrote the node last.
			ts := max(st.rec.Stamp, mark+1)
			ep, err := s.endpointOf(st.rec.Node, ts)
			if err != nil {
				return err
			}
			nr.Stamp, nr.Expect, nr.Written = ts, st.rec.Expect+1, st.rec.Expect+1
			rs, err := s.conn.Multi(ctx, &zk.SetDataRequest{Path: s.leafPath(st.rec.Node), Data: ep, Version: st.rec.Expect}, recOp())
			switch {
			case err == nil:
				return nil
			case len(rs) == 2 && rs[0].Error != nil && (errors.Is(rs[0].Error, zk.ErrBadVersion) || errors.Is(rs[0].Error, zk.ErrNoNode)):
				// A Leaf server wrote the node: leave it to it.
				nr.Stamp, nr.Expect, nr.Written = st.rec.Stamp, st.rec.Expect, st.rec.Written
			case errors.Is(err, zk.ErrBadVersion):
				continue
			default:
				return s.errorf("release worker %d: %w", l.Value, err)
			}
		}
		_, err = s.conn.Set(ctx, s.recPath(l.Value), recOp().Data, st.recStat.Version)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrBadVersion):
			continue
		default:
			return s.errorf("release worker %d: %w", l.Value, err)
		}
	}
	return s.errorf("release worker %d: the record kept changing: %w", l.Value, lease.ErrLost)
}

// List returns one record per worker ID of Leaf's registry and of flurry's
// records, by worker ID; see lease.Store. A worker ID is held while a flurry
// lease holds it, and while its Leaf node, last written by a Leaf server, is
// younger than Fresh (then Owner names the server: "Leaf server ip:port"). Its
// mark is the floor a new holder would start above. Every scope shares the
// registry, so scope only names the records.
func (s *Store) List(ctx context.Context, scope string) (_ []lease.Record, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	c, err := s.zkNow(ctx)
	if err != nil {
		return nil, s.errorf("list: %w", err)
	}
	nodes, err := s.nodes(ctx)
	if err != nil {
		return nil, s.errorf("list: %w", err)
	}
	recs, err := s.conn.Children(ctx, s.meta)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, s.errorf("list: %w", err)
	}
	names := map[int64]string{}
	for _, n := range nodes {
		if _, dup := names[n.seq]; !dup {
			names[n.seq] = n.name
		}
	}
	for _, r := range recs {
		if v, err := strconv.ParseInt(r, 10, 64); err == nil && v >= 0 && strconv.FormatInt(v, 10) == r {
			if _, ok := names[v]; !ok {
				names[v] = ""
			}
		}
	}
	values := make([]int64, 0, len(names))
	for v := range names {
		values = append(values, v)
	}
	slices.Sort(values)
	// Each worker ID's record, then its Leaf node when it has one.
	var paths []string
	at := make([][2]int, len(values)) // indexes into paths; -1 for none
	for i, v := range values {
		at[i] = [2]int{len(paths), -1}
		paths = append(paths, s.recPath(v))
		if names[v] != "" {
			at[i][1] = len(paths)
			paths = append(paths, s.leafPath(names[v]))
		}
	}
	got, err := s.conn.GetAll(ctx, paths)
	if err != nil {
		return nil, s.errorf("list: %w", err)
	}
	out := make([]lease.Record, 0, len(values))
	for i, v := range values {
		var st state
		if g := got[at[i][0]]; g.Stat != nil && json.Unmarshal(g.Data, &st.rec) == nil {
			st.recStat = g.Stat
		}
		if j := at[i][1]; j >= 0 && got[j].Stat != nil {
			st.leaf = got[j].Stat
			st.ep, st.epErr = parseEndpoint(got[j].Data)
		}
		r := lease.Record{Scope: scope, Value: v, Mark: st.floor(names[v], s.o.Margin), Epoch: st.rec.Epoch}
		held, until, err := s.held(ctx, c, &st)
		if err != nil {
			return nil, s.errorf("list: %w", err)
		}
		live, fresh, err := s.leafLive(ctx, c, &st, names[v], true)
		if err != nil {
			return nil, s.errorf("list: %w", err)
		}
		switch {
		case held:
			r.Held, r.Owner, r.Token = true, st.rec.Owner, st.rec.Token
			r.Expires = time.UnixMilli(until).UTC()
		case live:
			r.Held, r.Owner = true, "Leaf server "+addrOf(names[v])
			r.Expires = time.UnixMilli(fresh).UTC()
		}
		out = append(out, r)
	}
	return out, nil
}

// Identity is a random value the first caller writes under flurry's records of
// this Leaf name ({root}/flurry/identity), and that path: the same for every
// flurry on this ensemble and name.
func (s *Store) Identity(ctx context.Context) (lease.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx, s.meta+"/identity", storeid.Random())
	if err != nil {
		return lease.StoreIdentity{}, s.errorf("identity: %w", err)
	}
	return lease.StoreIdentity{ID: id}, nil
}
