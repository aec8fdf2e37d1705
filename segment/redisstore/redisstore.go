package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/redisconn"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "flurry:segment"

// Options configures a Store. The zero Options is valid for New; Open needs
// Client or Failover, which ParseURL sets.
type Options struct {
	// Prefix starts every key, inside the hash tag: {Prefix:tag}:tag. Empty means
	// DefaultPrefix. It must not contain '{' or '}'.
	Prefix string
	// WaitReplicas, when above zero, makes every write (Take, Return, Create,
	// SetStep) wait until that many replicas acknowledged it (Redis WAIT), and fail
	// otherwise; a Take that fails so hands out nothing. docs/segments.md ("Redis
	// store") says what that does and does not guarantee. It needs a
	// *redis.Client or a *redis.ClusterClient.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Zero means 1s.
	WaitTimeout time.Duration
	// RequestTimeout bounds each call whose context has no deadline, retries
	// included. Zero means 5s; negative means no bound (go-redis's own dial, read
	// and write timeouts still apply to each attempt). A call that runs out of
	// time fails with an error matching bound.ErrNoAnswer.
	RequestTimeout time.Duration
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
}

// ErrNotReplicated is matched (with errors.Is) by the error of a write that fewer
// replicas than Options.WaitReplicas acknowledged within Options.WaitTimeout. The
// write was made on the primary; see docs/segments.md ("Redis store").
var ErrNotReplicated = redisconn.ErrNotReplicated

// NotReplicatedError is the error, matching ErrNotReplicated, that says how many
// replicas acknowledged a write (Got) of how many asked for (Want); find it with
// errors.As.
type NotReplicatedError = redisconn.NotReplicatedError

// Store is a segment.Store in Redis. It is safe for concurrent use.
type Store struct {
	conn *redisconn.Conn

	take, ret, create, setStep *redis.Script
}

var _ segment.Store = (*Store)(nil)

// ParseURL reads a store URL into Options for Open, without connecting:
//
//	redis://[user:password@]host:port[/db][?prefix=flurry:segment&wait_replicas=1&wait_timeout=500ms&request_timeout=5s&...]
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
	return Options{Prefix: o.Prefix, WaitReplicas: o.WaitReplicas, WaitTimeout: o.WaitTimeout, RequestTimeout: o.RequestTimeout,
		Client: o.Client, Failover: o.Failover}, err
}

// kind names the package for redisconn.
func kind() redisconn.Kind {
	return redisconn.Kind{Package: "segment/redisstore", DefaultPrefix: DefaultPrefix}
}

// Open connects to the Redis server o names, checks that it answers, loads the
// scripts and returns a store that closes the connection on Close.
func Open(ctx context.Context, o Options) (*Store, error) {
	return redisconn.Open(ctx, o.conn(), kind(), newStore)
}

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
	s := &Store{conn: c, take: redis.NewScript(takeScript), ret: redis.NewScript(returnScript),
		create: redis.NewScript(createScript), setStep: redis.NewScript(setStepScript)}
	return s, []*redis.Script{s.take, s.ret, s.create, s.setStep}
}

// conn returns o as redisconn takes it.
func (o Options) conn() redisconn.Options {
	return redisconn.Options{Client: o.Client, Failover: o.Failover, Settings: redisconn.Settings{
		Prefix: o.Prefix, WaitReplicas: o.WaitReplicas, WaitTimeout: o.WaitTimeout, RequestTimeout: o.RequestTimeout}}
}

// Close closes the connection Open made; it does nothing for a store made by New.
func (s *Store) Close() error { return s.conn.Close() }

// keys returns the tag's keys in the order the scripts expect.
func (s *Store) keys(tag string) []string {
	h := "{" + s.conn.Settings.Prefix + ":" + tag + "}:"
	return []string{h + "tag", h + "returned"}
}

// index is the set of tag names, for Tags.
func (s *Store) index() string { return "{" + s.conn.Settings.Prefix + "}:tags" }

// pad writes a counter value in 19 digits, the width of 2^63-1, so that padded
// values sort as numbers.
func pad(v int64) string { return fmt.Sprintf("%019d", v) }

// member is how a returned block is kept in the returned set.
func member(first, last int64) string { return pad(first) + ":" + pad(last) }

// parseMember reads a member of the returned set.
func parseMember(m string) (first, last int64, ok bool) {
	if len(m) != 39 || m[19] != ':' {
		return 0, 0, false
	}
	first, ok1 := digits(m[:19])
	last, ok2 := digits(m[20:])
	return first, last, ok1 && ok2 && first >= 1 && first <= last
}

// digits reads a non-negative int64 written with digits only.
func digits(s string) (int64, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, s != "" && err == nil
}

func (s *Store) eval(ctx context.Context, sc *redis.Script, tag string, args []any, wrote func(any) bool) (any, error) {
	return s.conn.Eval(ctx, sc, s.keys(tag), args, wrote)
}

// code reads the first element of a script's reply: the outcome.
func code(res any) int64 {
	a, _ := res.([]any)
	if len(a) == 0 {
		return -1
	}
	n, _ := a[0].(int64)
	return n
}

// str reads the i-th element of a script's reply as a string.
func str(res any, i int) (string, error) {
	a, _ := res.([]any)
	if i < len(a) {
		if v, ok := a[i].(string); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("unexpected reply %v from Redis", res)
}

func num(res any, i int) (int64, error) {
	v, err := str(res, i)
	if err != nil {
		return 0, err
	}
	n, ok := digits(v)
	if !ok {
		return 0, fmt.Errorf("unexpected number %q in Redis's reply", v)
	}
	return n, nil
}

func unknown(op, tag string) error {
	return fmt.Errorf("segment/redisstore: %s %s: %w; create it first", op, tag, segment.ErrUnknownTag)
}

// Take claims the lowest returned block above floor, or n fresh values above
// max(Max, floor), in one script; see segment.Store.
func (s *Store) Take(ctx context.Context, tag string, n, floor, limit int64) (_ segment.Block, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if limit, err = segmentstore.CheckTake(tag, n, floor, limit); err != nil {
		return segment.Block{}, err
	}
	headroom := "-1" // n alone passes limit
	if n <= limit {
		headroom = strconv.FormatInt(limit-n, 10)
	}
	res, err := s.eval(ctx, s.take, tag, []any{pad(floor), strconv.FormatInt(floor, 10), headroom, n},
		func(res any) bool { c := code(res); return c == 1 || c == 2 })
	if res == nil {
		return segment.Block{}, fmt.Errorf("segment/redisstore: take %d from %s: %w", n, tag, err)
	}
	b, berr := taken(res, n, floor, limit)
	if berr != nil {
		if errors.Is(berr, segment.ErrUnknownTag) {
			return segment.Block{}, unknown("take from", tag)
		}
		return segment.Block{}, fmt.Errorf("segment/redisstore: take %d from %s: %w", n, tag, berr)
	}
	if err != nil {
		// The primary gave the block out, but too few replicas have it: a failover
		// could hand it out again. Drop it; its values are never issued.
		return segment.Block{}, fmt.Errorf("segment/redisstore: take %d from %s: %w; values %d..%d are skipped, not handed out: add replicas or lower WaitReplicas",
			n, tag, err, b.First, b.Last)
	}
	return b, nil
}

// taken reads the take script's reply.
func taken(res any, n, floor, limit int64) (segment.Block, error) {
	switch code(res) {
	case 0:
		return segment.Block{}, segment.ErrUnknownTag
	case 1:
		step, e1 := num(res, 1)
		last, e2 := num(res, 2)
		if err := errors.Join(e1, e2); err != nil {
			return segment.Block{}, err
		}
		b := segment.Block{First: last - n + 1, Last: last, Step: step}
		if b.First <= floor || b.First < 1 {
			return segment.Block{}, fmt.Errorf("the Redis script handed out %d..%d for %d values above %d", b.First, b.Last, n, floor)
		}
		return b, nil
	case 2:
		step, e1 := num(res, 1)
		m, e2 := str(res, 2)
		if err := errors.Join(e1, e2); err != nil {
			return segment.Block{}, err
		}
		first, last, ok := parseMember(m)
		if !ok {
			return segment.Block{}, fmt.Errorf("returned block %q in Redis is malformed", m)
		}
		return segment.Block{First: first, Last: last, Step: step, Returned: true}, nil
	case 3:
		base, err := num(res, 1)
		if err != nil {
			return segment.Block{}, err
		}
		if _, err = segmentstore.FreshBlock(base, floor, n, limit); err == nil {
			err = fmt.Errorf("the Redis script refused %d values above %d, which fit below %d", n, base, limit)
		}
		return segment.Block{}, err
	}
	return segment.Block{}, fmt.Errorf("unexpected reply %v from Redis", res)
}

// Return adds b to the tag's returned blocks. It refuses a block above the tag's
// Max or one that overlaps a block returned before, since handing those out could
// issue a value twice.
func (s *Store) Return(ctx context.Context, tag string, b segment.Block) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckReturn(tag, b); err != nil {
		return err
	}
	res, err := s.eval(ctx, s.ret, tag, []any{member(b.First, b.Last), pad(b.First), pad(b.Last), strconv.FormatInt(b.Last, 10)},
		func(res any) bool { return code(res) == 1 })
	if res == nil {
		return fmt.Errorf("segment/redisstore: return %d..%d to %s: %w", b.First, b.Last, tag, err)
	}
	switch code(res) {
	case 0:
		return unknown("return to", tag)
	case 1:
		if err != nil {
			return fmt.Errorf("segment/redisstore: return %d..%d to %s: %w; the block is returned on the primary, do not use it", b.First, b.Last, tag, err)
		}
		return nil
	case 4:
		m, _ := str(res, 1)
		return fmt.Errorf("segment/redisstore: return %d..%d to %s: the tag's max is %s, a block above it was never handed out", b.First, b.Last, tag, m)
	case 5:
		m, _ := str(res, 1)
		return fmt.Errorf("segment/redisstore: return %d..%d to %s: it overlaps the returned block %s; a block can be returned once", b.First, b.Last, tag, m)
	}
	return fmt.Errorf("segment/redisstore: return %d..%d to %s: unexpected reply %v from Redis", b.First, b.Last, tag, res)
}

// Create makes a tag; see segment.Store. It adds the name to the tag index first,
// then makes the tag's hash, so a Create that fails between the two leaves only a
// name that Tags skips, and can be retried.
func (s *Store) Create(ctx context.Context, t segment.Tag) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	if err := s.conn.Client.SAdd(ctx, s.index(), t.Name).Err(); err != nil {
		return fmt.Errorf("segment/redisstore: create %s: %w", t.Name, err)
	}
	res, err := s.eval(ctx, s.create, t.Name, []any{strconv.FormatInt(t.Max, 10), strconv.FormatInt(t.Step, 10), t.Description},
		func(res any) bool { return code(res) == 1 })
	if res == nil {
		return fmt.Errorf("segment/redisstore: create %s: %w", t.Name, err)
	}
	switch code(res) {
	case 0:
		return fmt.Errorf("segment/redisstore: create %s: %w", t.Name, segment.ErrTagExists)
	case 1:
		if err != nil {
			return fmt.Errorf("segment/redisstore: create %s: %w; the tag exists on the primary", t.Name, err)
		}
		return nil
	}
	return fmt.Errorf("segment/redisstore: create %s: unexpected reply %v from Redis", t.Name, res)
}

// SetStep changes a tag's step; see segment.Store.
func (s *Store) SetStep(ctx context.Context, tag string, step int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckSetStep(tag, step); err != nil {
		return err
	}
	res, err := s.eval(ctx, s.setStep, tag, []any{strconv.FormatInt(step, 10)}, func(res any) bool { return code(res) == 1 })
	if res == nil {
		return fmt.Errorf("segment/redisstore: set step of %s: %w", tag, err)
	}
	switch code(res) {
	case 0:
		return unknown("set step of", tag)
	case 1:
		if err != nil {
			return fmt.Errorf("segment/redisstore: set step of %s: %w; the step is set on the primary", tag, err)
		}
		return nil
	}
	return fmt.Errorf("segment/redisstore: set step of %s: unexpected reply %v from Redis", tag, res)
}

// Tags lists the tags in the index, by name. It reads each tag's hash and returned
// set in one pipeline; the listing is not one snapshot across tags.
func (s *Store) Tags(ctx context.Context) (_ []segment.Tag, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	names, err := s.conn.Client.SMembers(ctx, s.index()).Result()
	if err != nil {
		return nil, fmt.Errorf("segment/redisstore: tags: %w", err)
	}
	slices.Sort(names)
	hashes := make([]*redis.MapStringStringCmd, len(names))
	returned := make([]*redis.StringSliceCmd, len(names))
	_, err = s.conn.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range names {
			k := s.keys(name)
			hashes[i] = p.HGetAll(ctx, k[0])
			returned[i] = p.ZRange(ctx, k[1], 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("segment/redisstore: tags: %w", err)
	}
	tags := make([]segment.Tag, 0, len(names))
	for i, name := range names {
		h := hashes[i].Val()
		if len(h) == 0 {
			continue // a Create that failed after adding the name to the index
		}
		t, err := tagOf(name, h, returned[i].Val())
		if err != nil {
			return nil, fmt.Errorf("segment/redisstore: tags: %s: %w", name, err)
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// tagOf reads a tag from its hash and its returned set's members.
func tagOf(name string, h map[string]string, returned []string) (segment.Tag, error) {
	max, ok1 := digits(h["max"])
	step, ok2 := digits(h["step"])
	updated, ok3 := digits(h["updated"])
	if !ok1 || !ok2 || !ok3 {
		return segment.Tag{}, fmt.Errorf("malformed hash %v", h)
	}
	t := segment.Tag{Name: name, Max: max, Step: step, Description: h["desc"], Updated: time.UnixMilli(updated)}
	for _, m := range returned {
		first, last, ok := parseMember(m)
		if !ok {
			return segment.Tag{}, fmt.Errorf("malformed returned block %q", m)
		}
		t.Returned += last - first + 1
	}
	return t, nil
}

// Identity is a random value the first caller writes at {prefix}:identity, and the
// prefix: the same for every process on this Redis (and its replicas) and prefix.
func (s *Store) Identity(ctx context.Context) (segment.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx, "{"+s.conn.Settings.Prefix+"}:identity", storeid.Random())
	if err != nil {
		return segment.StoreIdentity{}, fmt.Errorf("segment/redisstore: %w", err)
	}
	return segment.StoreIdentity{ID: id}, nil
}
