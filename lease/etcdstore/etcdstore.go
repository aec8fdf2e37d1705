package etcdstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flurryid/flurry/internal/etcdconn"
	"github.com/flurryid/flurry/internal/retry"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "flurry/lease"

const (
	maxValue = 1 << 22 // package lease's largest pool
	// candidates is how many values Acquire tries from one read before reading
	// again; rounds bounds the reads. spread is how many of the best free values
	// a read offers: an acquirer that lost the best one to another tries the rest
	// from a place of its own (a hash of its token), so that many acquirers of one
	// scope spread over the free values instead of all aiming at the next best.
	candidates = 8
	rounds     = 16
	spread     = 256
)

// Options configures a Store. The zero Options is valid for New; Open needs
// Client.Endpoints, which ParseURL sets.
type Options struct {
	// Client configures Open's etcd client: Endpoints, Username and Password,
	// DialTimeout (which bounds Open's first connection and read, along with Open's
	// context; zero means 5s), TLS. ParseURL sets it. New ignores it. Open's client
	// reconnects within half a second of the cluster's return (see
	// docs/high-availability.md); DialOptions given here come after flurry's and win.
	Client clientv3.Config
	// Prefix starts every key: Prefix/scope/held/value. Empty means DefaultPrefix.
	// A trailing slash is dropped.
	Prefix string
	// RequestTimeout bounds each call whose context has no deadline: etcd's
	// client waits for a connection forever otherwise. Zero means 5s; negative
	// means no bound. A call that runs out of time fails with an error matching
	// bound.ErrNoAnswer and context.DeadlineExceeded.
	RequestTimeout time.Duration
}

// Store is a lease.Store in etcd. It is safe for concurrent use.
type Store struct {
	conn   *etcdconn.Conn
	cli    *clientv3.Client
	prefix string
	// ka renews the etcd leases of every session of the store over one stream.
	ka *etcdconn.Keeper
}

var _ lease.Store = (*Store)(nil)

// New returns a store using cli, which stays the caller's: Close does not close it.
func New(cli *clientv3.Client, opts Options) (*Store, error) {
	return newStore(etcdconn.New(cli, etcdconn.Options(opts), kind()))
}

func newStore(c *etcdconn.Conn, err error) (*Store, error) {
	if err != nil {
		return nil, err
	}
	return &Store{conn: c, cli: c.Cli, prefix: c.Prefix, ka: etcdconn.NewKeeper(c.Cli)}, nil
}

// Open connects to the etcd cluster o names, checks that it answers, and returns a
// store that closes the connection on Close.
func Open(ctx context.Context, o Options) (*Store, error) {
	return newStore(etcdconn.Open(ctx, etcdconn.Options(o), kind()))
}

// Close closes the client Open made; it does nothing for a store made by New. It
// does not release leases.
func (s *Store) Close() error {
	s.ka.Close()
	return s.conn.Close()
}

// ParseURL reads a store URL into Options for Open, without connecting:
//
//	etcd://[user:password@]host:port[,host:port...][/prefix][?dial_timeout=5s&request_timeout=5s]
//
// The endpoints are spoken to over plain HTTP/2 (no TLS); with several, the client
// moves to another when one fails (name every member of the cluster). The path,
// without its first slash, is the key prefix (etcd://h:2379//abs gives the prefix
// "/abs"); dial_timeout sets Client.DialTimeout and request_timeout RequestTimeout.
// Other query keys are refused. Errors never show the password.
func ParseURL(rawURL string) (Options, error) {
	o, err := etcdconn.ParseURL(rawURL, kind().Package)
	return Options(o), err
}

func kind() etcdconn.Kind {
	return etcdconn.Kind{Package: "lease/etcdstore", DefaultPrefix: DefaultPrefix, Probe: func(p string) string { return p + "/" }}
}

func (s *Store) heldPrefix(scope string) string { return s.prefix + "/" + scope + "/held/" }
func (s *Store) markPrefix(scope string) string { return s.prefix + "/" + scope + "/mark/" }

// expPrefix starts the keys that hold each held value's expiry, in Unix
// milliseconds, under the same etcd lease as its held key: List reads them in one
// range instead of asking etcd for the TTL of every lease.
func (s *Store) expPrefix(scope string) string { return s.prefix + "/" + scope + "/exp/" }

func (s *Store) keys(scope string, v int64) (held, mark string) {
	n := strconv.FormatInt(v, 10)
	return s.heldPrefix(scope) + n, s.markPrefix(scope) + n
}

func (s *Store) expKey(scope string, v int64) string {
	return s.expPrefix(scope) + strconv.FormatInt(v, 10)
}

// putExp writes a held value's expiry key under the value's etcd lease.
func (s *Store) putExp(scope string, v int64, id clientv3.LeaseID, expires time.Time) clientv3.Op {
	return clientv3.OpPut(s.expKey(scope, v), strconv.FormatInt(expires.UnixMilli(), 10), clientv3.WithLease(id))
}

// holder is the value of a held key.
type holder struct {
	Owner string `json:"owner"`
	Token string `json:"token"`
}

func newToken(id clientv3.LeaseID) string {
	return strconv.FormatInt(int64(id), 16) + "-" + rand.Text()
}

// leaseID reads the etcd lease ID from a token.
func leaseID(token string) (clientv3.LeaseID, bool) {
	h, r, ok := strings.Cut(token, "-")
	if !ok || r == "" {
		return 0, false
	}
	id, err := strconv.ParseInt(h, 16, 64)
	return clientv3.LeaseID(id), err == nil && id > 0
}

// parseValue reads a node value from the rest of a key after its prefix; keys of
// nested scopes ("a/b" below "a") do not parse.
func parseValue(rest string) (int64, bool) {
	if rest == "" || len(rest) > 7 || rest[0] == '0' && rest != "0" {
		return 0, false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, _ := strconv.ParseInt(rest, 10, 64)
	return v, v < maxValue
}

func seconds(ttl time.Duration) int64 { return int64((ttl + time.Second - 1) / time.Second) }

func checkTTL(ttl time.Duration) error { return leasestore.CheckTTL(ttl) }

// grantErr classifies an error of granting an etcd lease: etcd's "too large lease
// TTL" cannot be cured by retrying, so it matches lease.ErrBadConfig and a session
// stops at once instead of retrying forever.
func grantErr(err error) error {
	if errors.Is(err, rpctypes.ErrLeaseTTLTooLarge) || errors.Is(err, rpctypes.ErrGRPCLeaseTTLTooLarge) {
		return fmt.Errorf("%w: %w", lease.ErrBadConfig, err)
	}
	return err
}

// rangeAll reads every key under prefix at revision rev (0: now); see
// etcdconn.RangeAll.
func (s *Store) rangeAll(ctx context.Context, prefix string, rev int64, more ...clientv3.OpOption) ([]*mvccpb.KeyValue, int64, error) {
	return etcdconn.RangeAll(ctx, s.cli, prefix, rev, more...)
}

type markKV struct {
	mark, epoch, rev int64 // rev is the mark key's ModRevision
}

// parseMark reads a mark key's value: the mark, a space and the epoch, or the mark
// alone as written by a flurry from before epochs (epoch 0).
func parseMark(key, v []byte) (mark, epoch int64, err error) {
	ms, es, hasEpoch := strings.Cut(string(v), " ")
	mark, err = strconv.ParseInt(ms, 10, 64)
	if err == nil && hasEpoch {
		epoch, err = strconv.ParseInt(es, 10, 64)
	}
	if err != nil || epoch < 0 {
		return 0, 0, fmt.Errorf("mark key %s holds %q, not a mark and an epoch; it was not written by this package", key, v)
	}
	return mark, epoch, nil
}

// formatMark writes a mark key's value.
func formatMark(mark, epoch int64) string {
	return strconv.FormatInt(mark, 10) + " " + strconv.FormatInt(epoch, 10)
}

// scan reads a scope's held keys, without their values, and its mark keys at one
// revision: which values are held, and every mark.
func (s *Store) scan(ctx context.Context, scope string) (held map[int64]*mvccpb.KeyValue, marks map[int64]markKV, err error) {
	held, marks, _, err = s.scanAt(ctx, scope, clientv3.WithKeysOnly())
	return held, marks, err
}

// scanAt is scan with the held keys read with more, and returns the revision read.
func (s *Store) scanAt(ctx context.Context, scope string, more ...clientv3.OpOption) (held map[int64]*mvccpb.KeyValue, marks map[int64]markKV, rev int64, err error) {
	hp, mp := s.heldPrefix(scope), s.markPrefix(scope)
	hkvs, rev, err := s.rangeAll(ctx, hp, 0, more...)
	if err != nil {
		return nil, nil, 0, err
	}
	mkvs, _, err := s.rangeAll(ctx, mp, rev)
	if err != nil {
		return nil, nil, 0, err
	}
	held = make(map[int64]*mvccpb.KeyValue, len(hkvs))
	for _, kv := range hkvs {
		if v, ok := parseValue(string(kv.Key[len(hp):])); ok {
			held[v] = kv
		}
	}
	marks = make(map[int64]markKV, len(mkvs))
	for _, kv := range mkvs {
		v, ok := parseValue(string(kv.Key[len(mp):]))
		if !ok {
			continue
		}
		m, e, err := parseMark(kv.Key, kv.Value)
		if err != nil {
			return nil, nil, 0, err
		}
		marks[v] = markKV{m, e, kv.ModRevision}
	}
	return held, marks, rev, nil
}

type candidate struct {
	value int64
	markKV
}

// pick returns up to n free values of [0, size), lowest mark first, then lowest
// value. A value without a mark key has mark 0.
func pick(size int64, held map[int64]*mvccpb.KeyValue, marks map[int64]markKV, n int) []candidate {
	var used []candidate
	for v, m := range marks {
		if _, h := held[v]; v < size && !h {
			used = append(used, candidate{v, m})
		}
	}
	slices.SortFunc(used, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.mark, b.mark), cmp.Compare(a.value, b.value))
	})
	var fresh []candidate
	for v := int64(0); v < size && len(fresh) < n; v++ {
		_, h := held[v]
		if _, m := marks[v]; !h && !m {
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

// tryOrder returns the candidates an acquirer tries from one read, at most
// candidates of them: the best first, while it has not lost a race yet, then the
// others from a place given by a hash of its token. Acquirers that read the scope
// at the same moment see the same candidates; each but the first winner would lose
// every race down the same list, and read again, and lose again.
func tryOrder(cands []candidate, token string, round int) []candidate {
	if len(cands) <= 1 {
		return cands
	}
	out := make([]candidate, 0, min(candidates, len(cands)))
	rest := cands
	if round == 0 {
		out, rest = append(out, cands[0]), cands[1:]
	}
	h := fnv.New64a()
	h.Write([]byte(token))
	h.Write([]byte{byte(round)})
	at := int(h.Sum64() % uint64(len(rest)))
	for i := 0; len(out) < candidates && i < len(rest); i++ {
		out = append(out, rest[(at+i)%len(rest)])
	}
	return out
}

// revoke ends an etcd lease, best effort: if it fails the lease expires anyway.
func (s *Store) revoke(ctx context.Context, id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	s.cli.Revoke(ctx, id)
}

// Acquire claims the free value of [0, size) with the lowest mark, then the lowest
// value, under a new etcd lease; see lease.Store.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, func(held map[int64]*mvccpb.KeyValue, marks map[int64]markKV) []candidate {
		return pick(size, held, marks, spread)
	})
}

// AcquireValue claims exactly value under a new etcd lease; see lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, func(held map[int64]*mvccpb.KeyValue, marks map[int64]markKV) []candidate {
		if _, h := held[value]; h {
			return nil
		}
		return []candidate{{value, marks[value]}}
	})
}

// acquire claims one of the candidates choose finds in a scan of the scope, under a
// new etcd lease, scanning again when others took them all first.
func (s *Store) acquire(ctx context.Context, scope, owner string, ttl time.Duration,
	choose func(held map[int64]*mvccpb.KeyValue, marks map[int64]markKV) []candidate) (lease.Lease, error) {
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/etcdstore: acquire %s: %w", scope, err)
	}
	var (
		start   time.Time
		g       *clientv3.LeaseGrantResponse
		token   string
		hv      []byte
		claimed bool
	)
	// grant takes a new etcd lease to claim a value under. A claim can come later
	// than the lease's TTL when the machine or etcd is slow and other acquirers keep
	// winning; etcd then answers "requested lease not found", and the claim is tried
	// again under a fresh lease rather than failing the caller.
	grant := func() error {
		var err error
		start = time.Now()
		g, err = s.cli.Grant(ctx, seconds(ttl))
		if err != nil {
			return fmt.Errorf("granting an etcd lease: %w", grantErr(err))
		}
		token = newToken(g.ID)
		hv, err = json.Marshal(holder{owner, token})
		return err
	}
	if err := grant(); err != nil {
		return fail(err)
	}
	defer func() {
		if !claimed && g != nil {
			s.revoke(ctx, g.ID)
		}
	}()
	for round := range rounds {
		held, marks, err := s.scan(ctx, scope)
		if err != nil {
			return fail(err)
		}
		cands := choose(held, marks)
		if len(cands) == 0 {
			return fail(lease.ErrNoFreeValue)
		}
		for _, c := range tryOrder(cands, token, round) {
			hk, mk := s.keys(scope, c.value)
			// The mark key is written too, for the epoch: the comparison of its
			// revision makes the count exact under racing writers.
			r, err := s.cli.Txn(ctx).If(
				clientv3.Compare(clientv3.CreateRevision(hk), "=", 0),
				clientv3.Compare(clientv3.ModRevision(mk), "=", c.rev),
			).Then(
				clientv3.OpPut(hk, string(hv), clientv3.WithLease(g.ID)),
				clientv3.OpPut(mk, formatMark(c.mark, c.epoch+1)),
				s.putExp(scope, c.value, g.ID, start.Add(time.Duration(g.TTL)*time.Second)),
			).Commit()
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				// The lease expired before the claim: nothing was written under it.
				if err := grant(); err != nil {
					return fail(err)
				}
				break
			}
			if err != nil {
				return fail(err) // the deferred revoke deletes the key if the Txn did commit
			}
			if r.Succeeded {
				claimed = true
				return lease.Lease{Scope: scope, Value: c.value, Owner: owner, Token: token, Mark: c.mark,
					Expires: start.Add(time.Duration(g.TTL) * time.Second), Epoch: c.epoch + 1}, nil
			}
		}
		// Others took every candidate: read again after a short random pause.
		if err := (retry.Backoff{First: 5 * time.Millisecond, Max: 160 * time.Millisecond}).Wait(ctx, round+1); err != nil {
			return fail(err)
		}
	}
	return fail(fmt.Errorf("gave up after %d reads: other acquirers kept taking the free values first", rounds))
}

// state reads a value's held and mark keys from a Txn's responses.
func state(rs []*etcdserverpb.ResponseOp) (h *holder, heldRev int64, mk markKV, err error) {
	if len(rs) != 2 {
		return nil, 0, mk, fmt.Errorf("unexpected etcd response")
	}
	if kvs := rs[0].GetResponseRange().GetKvs(); len(kvs) == 1 {
		h = new(holder)
		if err := json.Unmarshal(kvs[0].Value, h); err != nil {
			return nil, 0, mk, fmt.Errorf("held key %s holds %q: %v", kvs[0].Key, kvs[0].Value, err)
		}
		heldRev = kvs[0].ModRevision
	}
	if kvs := rs[1].GetResponseRange().GetKvs(); len(kvs) == 1 {
		m, e, err := parseMark(kvs[0].Key, kvs[0].Value)
		if err != nil {
			return nil, 0, mk, err
		}
		mk = markKV{m, e, kvs[0].ModRevision}
	}
	return h, heldRev, mk, nil
}

// current reads a value's held and mark keys; h is nil when the value is not held.
func (s *Store) current(ctx context.Context, hk, mk string) (h *holder, heldRev int64, m markKV, err error) {
	r, err := s.cli.Txn(ctx).Then(clientv3.OpGet(hk), clientv3.OpGet(mk)).Commit()
	if err != nil {
		return nil, 0, m, err
	}
	return state(r.Responses)
}

func checkLease(l lease.Lease) (clientv3.LeaseID, error) {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return 0, err
	}
	if l.Value < 0 || l.Value >= maxValue {
		return 0, fmt.Errorf("lease: node value %d out of range", l.Value)
	}
	id, _ := leaseID(l.Token)
	return id, nil
}

// write commits ops on a value when its held key is still at heldRev and its mark
// key at m.rev, writing the mark key with the mark and epoch next gives for it; when
// only the mark key moved (a renewal of the same holder in flight) it reads again and
// tries again. It returns the mark key as it was before the write that committed,
// and the mark and epoch written; ErrLost when the held key changed.
func (s *Store) write(ctx context.Context, hk, mk string, heldRev int64, m markKV, next func(markKV) (mark, epoch int64), ops ...clientv3.Op) (before, after markKV, err error) {
	for round := range rounds {
		if round > 0 {
			// Another writer moved the mark between the read and the write: pause
			// a random moment, so that two writers do not collide again in step.
			if err := (retry.Backoff{First: time.Millisecond, Max: 16 * time.Millisecond}).Wait(ctx, round); err != nil {
				return before, after, err
			}
		}
		after.mark, after.epoch = next(m)
		all := append(slices.Clip(ops), clientv3.OpPut(mk, formatMark(after.mark, after.epoch)))
		r, err := s.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(hk), "=", heldRev),
			clientv3.Compare(clientv3.ModRevision(mk), "=", m.rev),
		).Then(all...).Else(clientv3.OpGet(hk), clientv3.OpGet(mk)).Commit()
		if err != nil {
			return before, after, err
		}
		if r.Succeeded {
			return m, after, nil
		}
		var h *holder
		var rev int64
		if h, rev, m, err = state(r.Responses); err != nil {
			return before, after, err
		}
		if h == nil || rev != heldRev {
			return before, after, lease.ErrLost
		}
	}
	return before, after, errors.New("the mark kept changing under concurrent writes")
}

// raised is the mark and epoch of a renewal or takeover: the mark raised to mark, the
// epoch one higher.
func raised(mark int64) func(markKV) (int64, int64) {
	return func(m markKV) (int64, int64) { return max(m.mark, mark), m.epoch + 1 }
}

// Renew keeps the lease's etcd lease alive and raises the mark; see lease.Store.
// A ttl longer than the etcd lease was granted with moves the value to a new etcd
// lease, with a new Token.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	return s.renew(ctx, l, ttl, mark, checkTTL)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL, which
// moves the value to a new etcd lease of that TTL, with a new Token.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	return s.renew(ctx, l, ttl, mark, leasestore.CheckPinTTL)
}

func (s *Store) renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64, check func(time.Duration) error) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	id, err := checkLease(l)
	if err == nil {
		err = check(ttl)
	}
	if err != nil {
		return lease.Lease{}, err
	}
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/etcdstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	if id == 0 {
		return fail(lease.ErrLost)
	}
	hk, mk := s.keys(l.Scope, l.Value)
	// Check the token first, so that a stale holder never extends another's lease.
	h, heldRev, m, err := s.current(ctx, hk, mk)
	if err != nil {
		return fail(err)
	}
	if h == nil || h.Token != l.Token {
		return fail(lease.ErrLost)
	}
	start := time.Now()
	granted, err := s.ka.KeepAliveOnce(ctx, id)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fail(lease.ErrLost)
	}
	if err != nil {
		return fail(err)
	}
	newID, token := id, l.Token
	var ops []clientv3.Op
	if granted < seconds(ttl) {
		g, err := s.cli.Grant(ctx, seconds(ttl))
		if err != nil {
			return fail(fmt.Errorf("granting an etcd lease for the longer ttl: %w", grantErr(err)))
		}
		newID, token, granted = g.ID, newToken(g.ID), g.TTL
		hv, err := json.Marshal(holder{h.Owner, token})
		if err != nil {
			return fail(err)
		}
		ops = append(ops, clientv3.OpPut(hk, string(hv), clientv3.WithLease(newID)))
	}
	ops = append(ops, s.putExp(l.Scope, l.Value, newID, start.Add(time.Duration(granted)*time.Second)))
	_, after, err := s.write(ctx, hk, mk, heldRev, m, raised(mark), ops...)
	if newID != id {
		if err != nil {
			s.revoke(ctx, newID)
		} else {
			s.revoke(ctx, id)
		}
	}
	if err != nil {
		return fail(err)
	}
	l.Token, l.Mark, l.Expires, l.Epoch = token, after.mark, start.Add(time.Duration(granted)*time.Second), after.epoch
	return l, nil
}

// Takeover moves the value to a new etcd lease with a new Token, then revokes l's
// etcd lease; see lease.Store. It takes two transactions: the first moves the held
// key to the new holder if it still holds l's token, which retires the token (every
// write of l's holder compares the held key's revision) and reads the mark as l's
// holder left it; the second raises the mark and counts the epoch, with no writer
// left to race. A mark written with the held key in one transaction would have to
// compare the mark key too, and an old holder that keeps renewing could then starve
// the takeover.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/etcdstore: take over %s/%d: %w", l.Scope, l.Value, err)
	}
	id, _ := leaseID(l.Token)
	if id == 0 {
		return fail(lease.ErrLost)
	}
	hk, mk := s.keys(l.Scope, l.Value)
	h, heldRev, _, err := s.current(ctx, hk, mk)
	if err != nil {
		return fail(err)
	}
	if h == nil || h.Token != l.Token {
		return fail(lease.ErrLost)
	}
	start := time.Now()
	g, err := s.cli.Grant(ctx, seconds(ttl))
	if err != nil {
		return fail(fmt.Errorf("granting an etcd lease: %w", grantErr(err)))
	}
	claimed := false
	defer func() {
		if !claimed {
			// Also when a transaction's answer was lost: revoking deletes the held
			// key if it did commit, so the value is free, not held by nobody.
			s.revoke(ctx, g.ID)
		}
	}()
	token := newToken(g.ID)
	hv, err := json.Marshal(holder{owner, token})
	if err != nil {
		return fail(err)
	}
	// The held key still at the revision that holds l's token is what makes one of
	// racing takeovers win: each rewrites it, so the others' comparisons fail.
	r, err := s.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.ModRevision(hk), "=", heldRev),
	).Then(clientv3.OpPut(hk, string(hv), clientv3.WithLease(g.ID)), clientv3.OpGet(mk),
		s.putExp(l.Scope, l.Value, g.ID, start.Add(time.Duration(g.TTL)*time.Second))).Commit()
	if err != nil {
		return fail(err)
	}
	if !r.Succeeded || len(r.Responses) != 3 {
		return fail(lease.ErrLost)
	}
	var m markKV
	if kvs := r.Responses[1].GetResponseRange().GetKvs(); len(kvs) == 1 {
		mark, epoch, err := parseMark(kvs[0].Key, kvs[0].Value)
		if err != nil {
			return fail(err)
		}
		m = markKV{mark, epoch, kvs[0].ModRevision}
	}
	_, after, err := s.write(ctx, hk, mk, r.Header.Revision, m, raised(mark))
	if err != nil {
		return fail(err)
	}
	claimed = true
	// The retired token's etcd lease holds no key anymore; revoking it is tidiness,
	// and it expires anyway when that fails.
	s.revoke(ctx, id)
	return lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: token, Mark: m.mark,
		Expires: start.Add(time.Duration(g.TTL) * time.Second), Epoch: after.epoch}, nil
}

// Release deletes the held key, sets the mark to mark, even below the reservation
// written by Renew, and revokes the etcd lease; see lease.Store.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	id, err := checkLease(l)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("lease/etcdstore: release %s/%d: %w", l.Scope, l.Value, err)
	}
	if id == 0 {
		return fail(lease.ErrLost)
	}
	hk, mk := s.keys(l.Scope, l.Value)
	h, heldRev, m, err := s.current(ctx, hk, mk)
	if err != nil {
		return fail(err)
	}
	if h == nil || h.Token != l.Token {
		return fail(lease.ErrLost)
	}
	// The releasing holder knows how far it really issued: its mark is set, even
	// below the reservation it wrote with Renew. The epoch stays.
	_, _, err = s.write(ctx, hk, mk, heldRev, m, func(m markKV) (int64, int64) { return max(mark, 0), m.epoch },
		clientv3.OpDelete(hk), clientv3.OpDelete(s.expKey(l.Scope, l.Value)))
	if err != nil {
		return fail(err)
	}
	s.revoke(ctx, id)
	return nil
}

// List returns the scope's values that have a mark or a holder, by value; see
// lease.Store. It reads the held, mark and expiry keys of the scope at one
// revision: a held key exists while its etcd lease lives, and Expires comes from
// the expiry key the holder's last write left under the same lease. Only a held
// value without one, written by a flurry from before expiry keys, costs a request
// for its lease's remaining TTL.
func (s *Store) List(ctx context.Context, scope string) (_ []lease.Record, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	fail := func(err error) ([]lease.Record, error) {
		return nil, fmt.Errorf("lease/etcdstore: list %s: %w", scope, err)
	}
	held, marks, rev, err := s.scanAt(ctx, scope)
	if err != nil {
		return fail(err)
	}
	ep := s.expPrefix(scope)
	ekvs, _, err := s.rangeAll(ctx, ep, rev)
	if err != nil {
		return fail(err)
	}
	exps := make(map[int64]*mvccpb.KeyValue, len(ekvs))
	for _, kv := range ekvs {
		if v, ok := parseValue(string(kv.Key[len(ep):])); ok {
			exps[v] = kv
		}
	}
	byValue := make(map[int64]*lease.Record, len(marks)+len(held))
	for v, m := range marks {
		byValue[v] = &lease.Record{Scope: scope, Value: v, Mark: m.mark, Epoch: m.epoch}
	}
	for v, kv := range held {
		r := byValue[v]
		if r == nil {
			r = &lease.Record{Scope: scope, Value: v}
			byValue[v] = r
		}
		var h holder
		if err := json.Unmarshal(kv.Value, &h); err != nil {
			return fail(fmt.Errorf("held key %s holds %q: %v", kv.Key, kv.Value, err))
		}
		if e := exps[v]; e != nil && e.Lease == kv.Lease {
			ms, err := strconv.ParseInt(string(e.Value), 10, 64)
			if err != nil {
				return fail(fmt.Errorf("expiry key %s holds %q, not Unix milliseconds; it was not written by this package", e.Key, e.Value))
			}
			r.Held, r.Owner, r.Token, r.Expires = true, h.Owner, h.Token, time.UnixMilli(ms)
			continue
		}
		now := time.Now()
		ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			return fail(err)
		}
		// etcd gives the remaining TTL in whole seconds, rounded down, and -1 for a
		// lease that is gone: 0 is a lease in its last second, still held.
		if ttl.TTL >= 0 {
			r.Held, r.Owner, r.Token, r.Expires = true, h.Owner, h.Token, now.Add(time.Duration(ttl.TTL)*time.Second)
		}
	}
	out := make([]lease.Record, 0, len(byValue))
	for _, r := range byValue {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b lease.Record) int { return cmp.Compare(a.Value, b.Value) })
	return out, nil
}

// ScopeMark implements lease.ScopeMarker: it reads the scope's held keys, without
// their values, and its mark keys at one revision, and none of the holders' etcd
// leases, so that a session starting in a scope of many holders costs two range
// reads.
func (s *Store) ScopeMark(ctx context.Context, scope string, value int64) (_ int64, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return 0, err
	}
	held, marks, err := s.scan(ctx, scope)
	if err != nil {
		return 0, fmt.Errorf("lease/etcdstore: read the marks of %s: %w", scope, err)
	}
	var m int64
	for v, mk := range marks {
		if _, h := held[v]; !h && v != value {
			m = max(m, mk.mark)
		}
	}
	return m, nil
}

var _ lease.ScopeMarker = (*Store)(nil)

// Identity is the etcd cluster's ID and the prefix.
func (s *Store) Identity(ctx context.Context) (lease.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx)
	if err != nil {
		return lease.StoreIdentity{}, fmt.Errorf("lease/etcdstore: %w", err)
	}
	return lease.StoreIdentity{ID: id}, nil
}
