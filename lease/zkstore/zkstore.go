package zkstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/internal/zkconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// DefaultPrefix is the node prefix when Options.Prefix is empty: the nodes live
// under /flurry/lease.
const DefaultPrefix = "flurry/lease"

const (
	maxValue = 1 << 22 // package lease's largest pool
	// candidates is how many values Acquire tries from one read before reading
	// again; rounds bounds the reads, and the retries of a write whose node moved.
	candidates = 8
	rounds     = 16
	// clockNode is written to read the leader's clock (its mtime); epochNode keeps
	// the first such reading of each leader. Scopes cannot name them: '#' is not
	// a scope character.
	clockNode = "#clock"
	epochNode = "#epoch"
)

// Options configures a Store. ParseURL fills it; the zero value of each field
// but Servers means its default.
type Options struct {
	// Servers are the members of the ensemble, host:port each; name every member,
	// so that the client moves to another when one fails.
	Servers []string
	// Prefix is the path under which the nodes live, without its leading slash.
	// Empty means DefaultPrefix.
	Prefix string
	// DialTimeout bounds Open: connecting to a member and getting a session,
	// along with Open's context. Zero means 5s.
	DialTimeout time.Duration
	// RequestTimeout bounds each call whose context has no deadline. Zero means
	// 5s; negative means no bound. A call that runs out of time fails with an
	// error matching bound.ErrNoAnswer and context.DeadlineExceeded.
	RequestTimeout time.Duration
	// SessionTimeout is the ZooKeeper session timeout the client asks for; it
	// only decides how soon the client gives up a connection that stays silent
	// (two thirds of it), as no lease lives in the session. Zero means 4s.
	SessionTimeout time.Duration
}

// Store is a lease.Store in ZooKeeper. It is safe for concurrent use.
type Store struct {
	conn *zkconn.Conn
	root string // "/flurry/lease"
}

var _ lease.Store = (*Store)(nil)

// ParseURL reads a store URL into Options for Open, without connecting:
//
//	zk://host[:port][,host[:port]...][/prefix][?dial_timeout=5s&request_timeout=5s]
//
// A host without a port gets 2181. The path, without its first slash, is the node
// prefix. Other query keys are refused, and so is a user or password: the store
// does not authenticate, and creates its nodes with an open ACL. Errors never show
// the password.
func ParseURL(rawURL string) (Options, error) {
	o, err := zkconn.ParseURL(rawURL, kind.Package)
	return Options(o), err
}

var kind = zkconn.Kind{Package: "lease/zkstore", DefaultPrefix: DefaultPrefix}

// Open connects to the ensemble o names and returns a store that closes the
// connection on Close; see zkconn.Open for the timeouts and reconnection.
func Open(ctx context.Context, o Options) (*Store, error) {
	c, err := zkconn.Open(ctx, zkconn.Options(o), kind)
	if err != nil {
		return nil, err
	}
	return &Store{conn: c, root: c.Prefix}, nil
}

// Close closes the connection. It does not release leases.
func (s *Store) Close() error { return s.conn.Close() }

// scopePath is the node of a scope: its slashes become %2F, so that a scope is
// one node whatever its depth and nested scopes never mix.
func (s *Store) scopePath(scope string) string {
	n := strings.ReplaceAll(scope, "/", "%2F")
	if n == "." || n == ".." {
		n = strings.ReplaceAll(n, ".", "%2E")
	}
	return s.root + "/" + n
}

func (s *Store) valuePath(scope string, v int64) string {
	return s.scopePath(scope) + "/" + strconv.FormatInt(v, 10)
}

// record is a value node's data. A free value keeps its mark only.
type record struct {
	Owner string `json:"owner,omitempty"`
	Token string `json:"token,omitempty"`
	TTL   int64  `json:"ttl_ms,omitempty"` // the live lease's TTL
	Mark  int64  `json:"mark"`
	// Epoch counts the node's writes (lease.Lease.Epoch); absent in nodes of a
	// flurry from before epochs, which then count from 0.
	Epoch int64 `json:"epoch,omitempty"`
}

func (r record) encode() []byte {
	b, _ := json.Marshal(r)
	return b
}

func decode(path string, data []byte) (record, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("node %s holds %q, not a lease record; it was not written by this package", path, data)
	}
	return r, nil
}

// node is a value's node as read.
type node struct {
	value int64
	rec   record
	stat  *zk.Stat // nil: no node, a value never used
}

// parseValue reads a node value from a child's name.
func parseValue(name string) (int64, bool) {
	if name == "" || len(name) > 7 || name[0] == '0' && name != "0" {
		return 0, false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, _ := strconv.ParseInt(name, 10, 64)
	return v, v < maxValue
}

// scan reads every value node of a scope.
func (s *Store) scan(ctx context.Context, scope string) (map[int64]node, error) {
	names, err := s.conn.Children(ctx, s.scopePath(scope))
	if errors.Is(err, zk.ErrNoNode) {
		return map[int64]node{}, nil
	}
	if err != nil {
		return nil, err
	}
	var values []int64
	var paths []string
	for _, n := range names {
		if v, ok := parseValue(n); ok {
			values = append(values, v)
			paths = append(paths, s.valuePath(scope, v))
		}
	}
	got, err := s.conn.GetAll(ctx, paths)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]node, len(got))
	for i, g := range got {
		if g.Stat == nil {
			continue // deleted since the listing
		}
		r, err := decode(g.Path, g.Data)
		if err != nil {
			return nil, err
		}
		out[values[i]] = node{values[i], r, g.Stat}
	}
	return out, nil
}

// A clock is one reading of the store's clock: a write's mtime, the wall clock of
// the ZooKeeper leader that committed it, with that leader's epoch.
type clock struct {
	now, epoch int64
	// start is the earliest reading known of this epoch's leader, which is after
	// every write committed under earlier leaders; 0 until needed.
	start int64
}

// ensure makes the root and the clock nodes.
func (s *Store) ensure(ctx context.Context) error {
	if err := s.conn.CreatePath(ctx, s.root+"/"+clockNode); err != nil {
		return err
	}
	return s.conn.CreatePath(ctx, s.root+"/"+epochNode)
}

// tick is the write that reads the clock.
func (s *Store) tick() *zk.SetDataRequest {
	return &zk.SetDataRequest{Path: s.root + "/" + clockNode, Version: -1}
}

// readClock writes the clock node and returns the reading.
func (s *Store) readClock(ctx context.Context) (clock, error) {
	for range 2 {
		st, err := s.conn.Set(ctx, s.root+"/"+clockNode, nil, -1)
		if errors.Is(err, zk.ErrNoNode) {
			if err := s.ensure(ctx); err != nil {
				return clock{}, err
			}
			continue
		}
		if err != nil {
			return clock{}, err
		}
		return clock{now: st.Mtime, epoch: zkconn.Epoch(st.Mzxid)}, nil
	}
	return clock{}, errors.New("the clock node keeps vanishing; do not delete the nodes under the prefix")
}

// checkedClock reads the clock in the same transaction that checks that a value's
// node is still at version: the reading is then an instant at which the node was
// as read. It returns zk.ErrBadVersion or zk.ErrNoNode when the node moved.
func (s *Store) checkedClock(ctx context.Context, path string, version int32) (clock, error) {
	for range 2 {
		rs, err := s.conn.Multi(ctx, &zk.CheckVersionRequest{Path: path, Version: version}, s.tick())
		if len(rs) == 2 {
			switch {
			case rs[0].Error != nil:
				return clock{}, rs[0].Error
			case errors.Is(rs[1].Error, zk.ErrNoNode):
				if err := s.ensure(ctx); err != nil {
					return clock{}, err
				}
				continue
			case rs[1].Error == nil && err == nil && rs[1].Stat != nil:
				return clock{now: rs[1].Stat.Mtime, epoch: zkconn.Epoch(rs[1].Stat.Mzxid)}, nil
			}
		}
		if err == nil {
			err = fmt.Errorf("unexpected answer to a transaction: %+v", rs)
		}
		return clock{}, err
	}
	return clock{}, errors.New("the clock node keeps vanishing; do not delete the nodes under the prefix")
}

// epochStart fills c.start: the reading kept in the epoch node when it is of
// c's epoch, else c.now, which it keeps there for the next readers.
func (s *Store) epochStart(ctx context.Context, c *clock) error {
	if c.start != 0 {
		return nil
	}
	p := s.root + "/" + epochNode
	for range rounds {
		data, st, err := s.conn.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			if err := s.ensure(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		var e, t int64
		if _, err := fmt.Sscanf(string(data), "%d %d", &e, &t); err == nil && e == c.epoch && t > 0 {
			c.start = t
			return nil
		}
		// The first reading of this leader that anyone kept: a later reading is
		// as safe (any write of this leader's comes after it was elected), only
		// slower to hand over values last renewed under the one before.
		_, err = s.conn.Set(ctx, p, fmt.Appendf(nil, "%d %d", c.epoch, c.now), st.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return err
		}
		c.start = c.now
		return nil
	}
	c.start = c.now
	return nil
}

// expires returns when the store considers the lease of a node expired, by the
// clock c reads: TTL after the node's last write (its mtime) when the leader that
// committed it is c's, else TTL after c's leader's first reading. ZooKeeper's
// members' clocks need not agree: no mtime is compared with another leader's.
func (s *Store) expires(ctx context.Context, c *clock, n node) (int64, error) {
	switch e := zkconn.Epoch(n.stat.Mzxid); {
	case e == c.epoch:
		return n.stat.Mtime + n.rec.TTL, nil
	case e < c.epoch:
		if err := s.epochStart(ctx, c); err != nil {
			return 0, err
		}
		return c.start + n.rec.TTL, nil
	default:
		// Written under a later leader than the reading: after it, so live.
		return c.now + n.rec.TTL, nil
	}
}

// live reports whether a node holds a live lease by the clock c reads, and until
// when.
func (s *Store) live(ctx context.Context, c *clock, n node) (bool, int64, error) {
	if n.stat == nil || n.rec.Token == "" {
		return false, 0, nil
	}
	exp, err := s.expires(ctx, c, n)
	return c.now < exp, exp, err
}

func newToken() string { return rand.Text() }

type candidate struct {
	value int64
	mark  int64
	epoch int64
	stat  *zk.Stat // nil: create the node
}

// pick returns up to n values of [0, size) that no live lease holds, lowest mark
// first, then lowest value; a value without a node has mark 0.
func pick(size int64, nodes map[int64]node, free func(node) bool, n int) []candidate {
	var used []candidate
	for v, nd := range nodes {
		if v < size && free(nd) {
			used = append(used, candidate{v, nd.rec.Mark, nd.rec.Epoch, nd.stat})
		}
	}
	slices.SortFunc(used, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.mark, b.mark), cmp.Compare(a.value, b.value))
	})
	var fresh []candidate
	for v := int64(0); v < size && len(fresh) < n; v++ {
		if _, ok := nodes[v]; !ok {
			fresh = append(fresh, candidate{value: v})
		}
	}
	out := make([]candidate, 0, n)
	for len(out) < n && (len(used) > 0 || len(fresh) > 0) {
		if len(fresh) == 0 || len(used) > 0 && (used[0].mark < 0 || used[0].mark == 0 && used[0].value < fresh[0].value) {
			out, used = append(out, used[0]), used[1:]
		} else {
			out, fresh = append(out, fresh[0]), fresh[1:]
		}
	}
	return out
}

// Acquire claims the value of [0, size) with the lowest mark, then the lowest
// value, among those no live lease holds; see lease.Store.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, func(nodes map[int64]node, free func(node) bool) []candidate {
		return pick(size, nodes, free, candidates)
	})
}

// AcquireValue claims exactly value when no live lease holds it; see lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, func(nodes map[int64]node, free func(node) bool) []candidate {
		nd, ok := nodes[value]
		switch {
		case !ok:
			return []candidate{{value: value}}
		case free(nd):
			return []candidate{{value, nd.rec.Mark, nd.rec.Epoch, nd.stat}}
		}
		return nil
	})
}

// acquire claims one of the candidates choose finds among a scope's nodes, reading
// them again when others took them all first. A candidate without a node is
// created (with a write of the same data in the same transaction, for its mtime);
// one with a node is written at the version read, so a holder that renewed
// meanwhile, or another acquirer, wins instead.
func (s *Store) acquire(ctx context.Context, scope, owner string, ttl time.Duration,
	choose func(nodes map[int64]node, free func(node) bool) []candidate) (lease.Lease, error) {
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/zkstore: acquire %s: %w", scope, err)
	}
	ms := ttl.Milliseconds()
	for range rounds {
		nodes, err := s.scan(ctx, scope)
		if err != nil {
			return fail(err)
		}
		// The clock is read after the nodes: a lease expired at the reading was
		// expired when read, and the write below fails if it was renewed since.
		var c clock
		if anyHeld(nodes) {
			if c, err = s.readClock(ctx); err != nil {
				return fail(err)
			}
		}
		var liveErr error
		free := func(n node) bool {
			l, _, err := s.live(ctx, &c, n)
			if err != nil && liveErr == nil {
				liveErr = err
			}
			return err == nil && !l
		}
		cands := choose(nodes, free)
		if liveErr != nil {
			return fail(liveErr)
		}
		if len(cands) == 0 {
			return fail(lease.ErrNoFreeValue)
		}
		for _, cd := range cands {
			token := newToken()
			rec := record{Owner: owner, Token: token, TTL: ms, Mark: cd.mark, Epoch: cd.epoch + 1}
			st, err := s.claim(ctx, scope, cd, rec.encode())
			if errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
				continue // another acquirer, or the holder, wrote it first
			}
			if err != nil {
				return fail(err)
			}
			return lease.Lease{Scope: scope, Value: cd.value, Owner: owner, Token: token, Mark: cd.mark,
				Expires: time.UnixMilli(st.Mtime + ms), Epoch: rec.Epoch}, nil
		}
	}
	return fail(errors.New("the values kept being taken by other acquirers; try again"))
}

// claim writes a candidate's node and returns its stat.
func (s *Store) claim(ctx context.Context, scope string, cd candidate, data []byte) (*zk.Stat, error) {
	p := s.valuePath(scope, cd.value)
	if cd.stat != nil {
		return s.conn.Set(ctx, p, data, cd.stat.Version)
	}
	for range 2 {
		rs, err := s.conn.Multi(ctx,
			&zk.CreateRequest{Path: p, Data: data, Acl: zk.WorldACL(zk.PermAll)},
			&zk.SetDataRequest{Path: p, Data: data, Version: 0})
		if len(rs) == 2 && rs[0].Error == nil && rs[1].Error == nil && err == nil && rs[1].Stat != nil {
			return rs[1].Stat, nil
		}
		if len(rs) == 2 && rs[0].Error != nil {
			err = rs[0].Error
		}
		if !errors.Is(err, zk.ErrNoNode) {
			if err == nil {
				err = fmt.Errorf("unexpected answer to a transaction: %+v", rs)
			}
			return nil, err
		}
		// The scope's node is missing: make it, and try again.
		if err := s.conn.CreatePath(ctx, s.scopePath(scope)); err != nil {
			return nil, err
		}
	}
	return nil, zk.ErrNoNode
}

func checkLease(l lease.Lease) error {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return err
	}
	if l.Value < 0 || l.Value >= maxValue {
		return fmt.Errorf("lease: node value %d out of range", l.Value)
	}
	return nil
}

// held reads a value's node and confirms that it holds l's live lease: same
// token, and not expired by the store's clock at an instant when the node was as
// read. It returns lease.ErrLost otherwise.
func (s *Store) held(ctx context.Context, l lease.Lease) (node, error) {
	p := s.valuePath(l.Scope, l.Value)
	for range rounds {
		data, st, err := s.conn.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return node{}, lease.ErrLost
		}
		if err != nil {
			return node{}, err
		}
		r, err := decode(p, data)
		if err != nil {
			return node{}, err
		}
		n := node{l.Value, r, st}
		if l.Token == "" || r.Token != l.Token {
			return node{}, lease.ErrLost
		}
		c, err := s.checkedClock(ctx, p, st.Version)
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
			continue // written since the read: read it again
		}
		if err != nil {
			return node{}, err
		}
		live, _, err := s.live(ctx, &c, n)
		if err != nil {
			return node{}, err
		}
		if !live {
			return node{}, lease.ErrLost
		}
		return n, nil
	}
	return node{}, errors.New("the value's node kept changing under concurrent writes")
}

// Renew extends a live lease to ttl from now, by the ZooKeeper leader's clock, and
// raises the mark; see lease.Store.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	return s.renew(ctx, l, ttl, mark, leasestore.CheckTTL)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL. The
// lease's expiry is data in its persistent node, so a pinned lease outlives any
// ZooKeeper session.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	return s.renew(ctx, l, ttl, mark, leasestore.CheckPinTTL)
}

func (s *Store) renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64, check func(time.Duration) error) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := checkLease(l); err != nil {
		return lease.Lease{}, err
	}
	if err := check(ttl); err != nil {
		return lease.Lease{}, err
	}
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/zkstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	for range rounds {
		n, err := s.held(ctx, l)
		if err != nil {
			return fail(err)
		}
		r := n.rec
		r.TTL, r.Mark = ttl.Milliseconds(), max(r.Mark, mark)
		r.Epoch++
		st, err := s.conn.Set(ctx, s.valuePath(l.Scope, l.Value), r.encode(), n.stat.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue // written since: held says whether it is still ours
		}
		if err != nil {
			return fail(err)
		}
		l.Mark, l.Expires, l.Epoch = r.Mark, time.UnixMilli(st.Mtime+r.TTL), r.Epoch
		return l, nil
	}
	return fail(errors.New("the value's node kept changing under concurrent writes"))
}

// Takeover gives the live lease l to owner under a new token with one write at
// the node version held read, so of racing takeovers one writes and the others
// find the token changed; see lease.Store.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/zkstore: take over %s/%d: %w", l.Scope, l.Value, err)
	}
	for range rounds {
		n, err := s.held(ctx, l)
		if err != nil {
			return fail(err)
		}
		r := record{Owner: owner, Token: newToken(), TTL: ttl.Milliseconds(), Mark: max(n.rec.Mark, mark), Epoch: n.rec.Epoch + 1}
		st, err := s.conn.Set(ctx, s.valuePath(l.Scope, l.Value), r.encode(), n.stat.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue // written since: held says whether l is still the live lease
		}
		if err != nil {
			return fail(err)
		}
		return lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: r.Token, Mark: n.rec.Mark,
			Expires: time.UnixMilli(st.Mtime + r.TTL), Epoch: r.Epoch}, nil
	}
	return fail(errors.New("the value's node kept changing under concurrent writes"))
}

// Release frees a live lease at once and sets the mark to mark, even below the
// reservation written by Renew; see lease.Store.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := checkLease(l); err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("lease/zkstore: release %s/%d: %w", l.Scope, l.Value, err)
	}
	for range rounds {
		n, err := s.held(ctx, l)
		if err != nil {
			return fail(err)
		}
		// The releasing holder knows how far it really issued: its mark is set,
		// even below the reservation it wrote with Renew.
		_, err = s.conn.Set(ctx, s.valuePath(l.Scope, l.Value), record{Mark: max(mark, 0), Epoch: n.rec.Epoch}.encode(), n.stat.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		return nil
	}
	return fail(errors.New("the value's node kept changing under concurrent writes"))
}

// List returns the scope's values that have a node, by value; see lease.Store.
// Held and Expires are judged by one reading of the store's clock, taken after
// the nodes were read.
func (s *Store) List(ctx context.Context, scope string) (_ []lease.Record, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	fail := func(err error) ([]lease.Record, error) {
		return nil, fmt.Errorf("lease/zkstore: list %s: %w", scope, err)
	}
	nodes, err := s.scan(ctx, scope)
	if err != nil {
		return fail(err)
	}
	var c clock
	out := make([]lease.Record, 0, len(nodes))
	for _, n := range nodes {
		r := lease.Record{Scope: scope, Value: n.value, Mark: n.rec.Mark, Epoch: n.rec.Epoch}
		if n.rec.Token != "" {
			if c.now == 0 {
				if c, err = s.readClock(ctx); err != nil {
					return fail(err)
				}
			}
			live, exp, err := s.live(ctx, &c, n)
			if err != nil {
				return fail(err)
			}
			if live {
				r.Held, r.Owner, r.Token, r.Expires = true, n.rec.Owner, n.rec.Token, time.UnixMilli(exp)
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b lease.Record) int { return cmp.Compare(a.Value, b.Value) })
	return out, nil
}

// anyHeld reports whether a node names a holder, live or not: only then does
// Acquire need the store's clock.
func anyHeld(nodes map[int64]node) bool {
	for _, n := range nodes {
		if n.rec.Token != "" {
			return true
		}
	}
	return false
}

// identityNode holds the store's random identity, under the root. No scope's
// node can have its name: a scope's only '%' come from its escaped slashes.
const identityNode = "%identity"

// Identity is a random value the first caller writes in the root's %identity
// node, and the root: the same for every process on this ensemble and prefix.
func (s *Store) Identity(ctx context.Context) (lease.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx, s.root+"/"+identityNode, storeid.Random())
	if err != nil {
		return lease.StoreIdentity{}, fmt.Errorf("lease/zkstore: %w", err)
	}
	return lease.StoreIdentity{ID: id}, nil
}
