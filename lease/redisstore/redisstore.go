package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/redisconn"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "flurry:lease"

// maxValue bounds node values: members have seven digits, and package lease allows
// pools of up to 2^22 values.
const maxValue = 1 << 22

// Options configures a Store. The zero Options is valid for New; Open needs
// Client or Failover, which ParseURL sets.
type Options struct {
	// Client configures Open's connection to one Redis server (redis.NewClient).
	// ParseURL sets it for redis:// and rediss:// URLs. New ignores it. Open's
	// client dials through a wrapper of Dialer (or of go-redis's dialer) that keeps
	// go-redis from holding back calls after failed dials (see
	// docs/high-availability.md).
	Client *redis.Options
	// Failover configures Open's connection to the primary that Redis Sentinel
	// names (redis.NewFailoverClient), followed through failovers. ParseURL sets it
	// for redis+sentinel:// and rediss+sentinel:// URLs. New ignores it.
	Failover *redis.FailoverOptions
	// Prefix starts every key, inside the hash tag: {Prefix:scope}:marks. Empty
	// means DefaultPrefix. It must not contain '{' or '}'.
	Prefix string
	// WaitReplicas, when above zero, makes every write wait until that many
	// replicas acknowledged it (Redis WAIT), and fail otherwise. docs/leases.md
	// ("Redis store") says what that does and does not guarantee. It needs a
	// *redis.Client or a *redis.ClusterClient.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Zero means 1s.
	WaitTimeout time.Duration
	// RequestTimeout bounds each call whose context has no deadline, retries
	// included. Zero means 5s; negative means no bound (go-redis's own dial, read
	// and write timeouts still apply to each attempt). A call that runs out of
	// time fails with an error matching bound.ErrNoAnswer.
	RequestTimeout time.Duration
}

// Store is a lease.Store in Redis. It is safe for concurrent use.
type Store struct {
	conn *redisconn.Conn

	acquire, acqVal, renew, takeover, release, list, scopeMark *redis.Script
	// renewals sends the renewals of every session of the store that arrive
	// together in one pipeline (batch.go).
	renewals *batcher
}

var _ lease.Store = (*Store)(nil)

// New returns a store using client, which stays the caller's: Close does not close
// it. It fails when opts is invalid.
//
// The client should have ContextTimeoutEnabled set, so that a context's deadline
// bounds each call; otherwise a stalled server blocks calls for the client's
// ReadTimeout and retries.
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	return redisconn.New(client, opts.conn(), kind(), newStore)
}

// newStore makes the store on c and returns its scripts, for Open to load.
func newStore(c *redisconn.Conn) (*Store, []*redis.Script) {
	s := &Store{conn: c, acquire: redis.NewScript(acquireScript), acqVal: redis.NewScript(acquireValueScript),
		renew: redis.NewScript(renewScript), takeover: redis.NewScript(takeoverScript), release: redis.NewScript(releaseScript),
		list: redis.NewScript(listScript), scopeMark: redis.NewScript(scopeMarkScript)}
	s.renewals = newBatcher(c.Client, s.renew)
	return s, []*redis.Script{s.acquire, s.acqVal, s.renew, s.takeover, s.release, s.list, s.scopeMark}
}

// Open connects to the Redis server o names, checks that it answers, loads the
// scripts and returns a store that closes the connection on Close.
func Open(ctx context.Context, o Options) (*Store, error) {
	return redisconn.Open(ctx, o.conn(), kind(), newStore)
}

// Close closes the connection Open made; it does nothing for a store made by New.
// It does not release leases.
func (s *Store) Close() error {
	s.renewals.close()
	return s.conn.Close()
}

// ParseURL reads a store URL into Options for Open, without connecting:
//
//	redis://[user:password@]host:port[/db][?prefix=flurry:lease&wait_replicas=1&wait_timeout=500ms&request_timeout=5s&...]
//	rediss://...   (TLS)
//	redis+sentinel://[[user]:password@]host:26379[,host:26379...]/master[/db][?...]
//	rediss+sentinel://...   (TLS)
//
// The Sentinel form finds the primary of the master name through the sentinels
// (go-redis's failover client) and follows it when Sentinel fails over; the user
// and password are the primary's, sentinel_password=... gives the sentinels' own.
// prefix, wait_replicas, wait_timeout and request_timeout set the Options fields
// of those names; every other query key goes to go-redis (redis.ParseURL or
// redis.ParseFailoverURL: dial_timeout, read_timeout, max_retries, pool_size, ...),
// which refuses keys it does not know. Errors never show the password.
func ParseURL(rawURL string) (Options, error) {
	o, err := redisconn.ParseURL(rawURL, kind().Package)
	return Options{Client: o.Client, Failover: o.Failover,
		Prefix: o.Prefix, WaitReplicas: o.WaitReplicas, WaitTimeout: o.WaitTimeout, RequestTimeout: o.RequestTimeout}, err
}

// kind names the package for redisconn.
func kind() redisconn.Kind {
	return redisconn.Kind{Package: "lease/redisstore", DefaultPrefix: DefaultPrefix}
}

// conn returns o as redisconn takes it.
func (o Options) conn() redisconn.Options {
	s := redisconn.Settings{Prefix: o.Prefix, WaitReplicas: o.WaitReplicas, WaitTimeout: o.WaitTimeout, RequestTimeout: o.RequestTimeout}
	return redisconn.Options{Client: o.Client, Failover: o.Failover, Settings: s}
}

// keys returns the scope's keys in the order the scripts expect.
func (s *Store) keys(scope string) []string {
	tag := "{" + s.conn.Settings.Prefix + ":" + scope + "}:"
	return []string{tag + "marks", tag + "held", tag + "free", tag + "tokens", tag + "owners", tag + "next", tag + "epochs"}
}

func member(v int64) string { return fmt.Sprintf("%07d", v) }

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// ErrNotReplicated is matched (with errors.Is) by the error of a write that fewer
// replicas than Options.WaitReplicas acknowledged within Options.WaitTimeout. The
// write was made on the primary; see docs/leases.md ("Redis store").
var ErrNotReplicated = redisconn.ErrNotReplicated

// NotReplicatedError is the error, matching ErrNotReplicated, that says how many
// replicas acknowledged a write (Got) of how many asked for (Want); find it with
// errors.As.
type NotReplicatedError = redisconn.NotReplicatedError

// eval runs a script, with WAIT when Options.WaitReplicas asks for it; see
// redisconn.Eval.
func (s *Store) eval(ctx context.Context, sc *redis.Script, keys []string, args []any, wrote func(any) bool) (any, error) {
	return s.conn.Eval(ctx, sc, keys, args, wrote)
}

// ok reports whether a script's reply is a success ({1, ...} or an acquired value).
func ok(res any) bool {
	a, _ := res.([]any)
	if len(a) == 0 {
		return false
	}
	n, _ := a[0].(int64)
	return n >= 0 && (len(a) == 4 || n == 1)
}

func reply(res any, n int) ([]any, error) {
	a, isSlice := res.([]any)
	if !isSlice || len(a) < n {
		return nil, fmt.Errorf("unexpected reply %v", res)
	}
	return a, nil
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("unexpected reply %v", v)
}

// Acquire claims the free value of [0, size) with the lowest mark, then the lowest
// value; see lease.Store.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	token := rand.Text()
	return s.claim(ctx, scope, owner, token, s.acquire, []any{size, owner, token, ms(ttl)})
}

// AcquireValue claims exactly value; see lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	token := rand.Text()
	return s.claim(ctx, scope, owner, token, s.acqVal, []any{member(value), owner, token, ms(ttl)})
}

// claim runs an acquiring script and reads its reply.
func (s *Store) claim(ctx context.Context, scope, owner, token string, script *redis.Script, args []any) (lease.Lease, error) {
	keys := s.keys(scope)
	res, err := s.eval(ctx, script, keys, args, ok)
	var l lease.Lease
	if res != nil {
		l, err = acquired(res, err, scope, owner, token)
	}
	if err != nil {
		if l.Token != "" {
			// The primary holds the value, but replicas did not acknowledge it and
			// the caller will not know it: give it back rather than let it sit
			// until its TTL.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.conn.Settings.WaitTimeout+time.Second)
			s.Release(rctx, l, l.Mark)
			cancel()
		}
		return lease.Lease{}, fmt.Errorf("lease/redisstore: acquire %s: %w", scope, err)
	}
	return l, nil
}

func acquired(res any, err error, scope, owner, token string) (lease.Lease, error) {
	a, rerr := reply(res, 1)
	if rerr != nil {
		return lease.Lease{}, rerr
	}
	if v, _ := a[0].(int64); v == -1 && len(a) == 1 {
		return lease.Lease{}, lease.ErrNoFreeValue
	}
	if a, rerr = reply(res, 4); rerr != nil {
		return lease.Lease{}, rerr
	}
	value, e1 := asInt(a[0])
	mark, e2 := asInt(a[1])
	exp, e3 := asInt(a[2])
	epoch, e4 := asInt(a[3])
	if e := errors.Join(e1, e2, e3, e4); e != nil {
		return lease.Lease{}, e
	}
	l := lease.Lease{Scope: scope, Value: value, Owner: owner, Token: token, Mark: mark, Expires: time.UnixMilli(exp), Epoch: epoch}
	return l, err
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

// Renew extends a live lease to ttl from now, by Redis's clock, and raises the
// mark; see lease.Store.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTTL(ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.extend(ctx, l, ttl, mark)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckPinTTL(ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.extend(ctx, l, ttl, mark)
}

func (s *Store) extend(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := checkLease(l); err != nil {
		return lease.Lease{}, err
	}
	keys, args := s.keys(l.Scope), []any{member(l.Value), l.Token, ms(ttl), max(mark, 0)}
	var res any
	if s.conn.Settings.WaitReplicas == 0 {
		res, err = s.renewals.run(ctx, keys, args)
	} else {
		// WAIT counts the replicas of a connection's writes: each renewal keeps
		// its own connection.
		res, err = s.eval(ctx, s.renew, keys, args, ok)
	}
	if err != nil {
		return lease.Lease{}, fmt.Errorf("lease/redisstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	a, err := reply(res, 1)
	if err != nil {
		return lease.Lease{}, fmt.Errorf("lease/redisstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	if n, _ := a[0].(int64); n != 1 {
		return lease.Lease{}, fmt.Errorf("lease/redisstore: renew %s/%d: %w", l.Scope, l.Value, lease.ErrLost)
	}
	m, exp, epoch, err := granted(res)
	if err != nil {
		return lease.Lease{}, fmt.Errorf("lease/redisstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	l.Mark, l.Expires, l.Epoch = m, time.UnixMilli(exp), epoch
	return l, nil
}

// granted reads the {1, mark, expires ms, epoch} reply of a renewal or takeover.
func granted(res any) (mark, exp, epoch int64, err error) {
	a, err := reply(res, 4)
	if err != nil {
		return 0, 0, 0, err
	}
	mark, e1 := asInt(a[1])
	exp, e2 := asInt(a[2])
	epoch, e3 := asInt(a[3])
	return mark, exp, epoch, errors.Join(e1, e2, e3)
}

// Takeover gives the live lease l to owner under a new token in one script; see
// lease.Store.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	fail := func(err error) (lease.Lease, error) {
		return lease.Lease{}, fmt.Errorf("lease/redisstore: take over %s/%d: %w", l.Scope, l.Value, err)
	}
	mark = max(mark, 0)
	out := lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: rand.Text()}
	res, err := s.eval(ctx, s.takeover, s.keys(l.Scope), []any{member(l.Value), l.Token, out.Token, owner, ms(ttl), mark}, ok)
	if err != nil && ok(res) {
		// The primary gave the lease over, but replicas did not acknowledge it and
		// the caller will not know it: give it back, with the raised mark, rather
		// than let it sit until its TTL.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.conn.Settings.WaitTimeout+time.Second)
		if before, _, _, gerr := granted(res); gerr == nil {
			s.Release(rctx, out, max(before, mark))
		}
		cancel()
	}
	if err != nil {
		return fail(err)
	}
	a, err := reply(res, 1)
	if err != nil {
		return fail(err)
	}
	if n, _ := a[0].(int64); n != 1 {
		return fail(lease.ErrLost)
	}
	before, exp, epoch, err := granted(res)
	if err != nil {
		return fail(err)
	}
	out.Mark, out.Expires, out.Epoch = before, time.UnixMilli(exp), epoch
	return out, nil
}

// List returns the scope's values that have a mark, by value; see lease.Store.
func (s *Store) List(ctx context.Context, scope string) (_ []lease.Record, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	res, err := s.list.Run(ctx, s.conn.Client, s.keys(scope)).Result()
	if err != nil {
		return nil, fmt.Errorf("lease/redisstore: list %s: %w", scope, err)
	}
	recs, err := records(scope, res)
	if err != nil {
		return nil, fmt.Errorf("lease/redisstore: list %s: %w", scope, err)
	}
	return recs, nil
}

// ScopeMark implements lease.ScopeMarker in one script that reads the top of the
// scope's free set and the leases expired but not yet reaped: a session that
// starts in a scope of many holders reads one number, not a record per holder.
func (s *Store) ScopeMark(ctx context.Context, scope string, value int64) (_ int64, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return 0, err
	}
	if value < 0 || value >= 1<<22 {
		return 0, fmt.Errorf("lease: node value %d out of range", value)
	}
	res, err := s.scopeMark.Run(ctx, s.conn.Client, s.keys(scope), member(value)).Result()
	if err == nil {
		var m int64
		if m, err = asInt(res); err == nil {
			return m, nil
		}
	}
	return 0, fmt.Errorf("lease/redisstore: read the marks of %s: %w", scope, err)
}

var _ lease.ScopeMarker = (*Store)(nil)

// Release ends a live lease and sets the mark to mark, even below the reservation
// written by Renew; see lease.Store.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := checkLease(l); err != nil {
		return err
	}
	res, err := s.eval(ctx, s.release, s.keys(l.Scope), []any{member(l.Value), l.Token, max(mark, 0)}, ok)
	if err != nil {
		return fmt.Errorf("lease/redisstore: release %s/%d: %w", l.Scope, l.Value, err)
	}
	a, err := reply(res, 1)
	if err != nil {
		return fmt.Errorf("lease/redisstore: release %s/%d: %w", l.Scope, l.Value, err)
	}
	if n, _ := a[0].(int64); n != 1 {
		return fmt.Errorf("lease/redisstore: release %s/%d: %w", l.Scope, l.Value, lease.ErrLost)
	}
	return nil
}

func records(scope string, res any) ([]lease.Record, error) {
	a, err := reply(res, 6)
	if err != nil {
		return nil, err
	}
	now, err := asInt(a[0])
	if err != nil {
		return nil, err
	}
	pairs := func(v any) (map[string]string, error) {
		f, _ := v.([]any)
		out := make(map[string]string, len(f)/2)
		for i := 0; i+1 < len(f); i += 2 {
			k, ok1 := f[i].(string)
			v, ok2 := f[i+1].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("unexpected reply %v", f)
			}
			out[k] = v
		}
		return out, nil
	}
	marks, e1 := pairs(a[1])
	held, e2 := pairs(a[2])
	tokens, e3 := pairs(a[3])
	owners, e4 := pairs(a[4])
	epochs, e5 := pairs(a[5])
	if err := errors.Join(e1, e2, e3, e4, e5); err != nil {
		return nil, err
	}
	recs := make([]lease.Record, 0, len(marks))
	for m, mark := range marks {
		v, e1 := strconv.ParseInt(m, 10, 64)
		mk, e2 := strconv.ParseInt(mark, 10, 64)
		if err := errors.Join(e1, e2); err != nil {
			return nil, err
		}
		r := lease.Record{Scope: scope, Value: v, Mark: mk}
		if e, ok := epochs[m]; ok {
			if r.Epoch, err = strconv.ParseInt(e, 10, 64); err != nil {
				return nil, err
			}
		}
		if e, isHeld := held[m]; isHeld {
			exp, err := strconv.ParseFloat(e, 64)
			if err != nil {
				return nil, err
			}
			if int64(exp) > now {
				r.Held, r.Owner, r.Token, r.Expires = true, owners[m], tokens[m], time.UnixMilli(int64(exp))
			}
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Value < recs[j].Value })
	return recs, nil
}

// Identity is a random value the first caller writes at {prefix}:identity, and the
// prefix: the same for every process on this Redis (and its replicas) and prefix.
func (s *Store) Identity(ctx context.Context) (lease.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx, "{"+s.conn.Settings.Prefix+"}:identity", storeid.Random())
	if err != nil {
		return lease.StoreIdentity{}, fmt.Errorf("lease/redisstore: %w", err)
	}
	return lease.StoreIdentity{ID: id}, nil
}
