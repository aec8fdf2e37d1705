package etcdstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flurryid/flurry/internal/etcdconn"
	"github.com/flurryid/flurry/internal/retry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "flurry"

const (
	// attempts bounds the transactions one call makes when other callers keep
	// changing the tag between its read and its write. The caller's context is the
	// real bound; this only stops a runaway. 200 was starved by 15 rivals on a
	// loaded 2-CPU machine.
	attempts = 5000
	// peek is how many returned keys Take reads with the tag record.
	peek = 8
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
	// Prefix starts every key: Prefix/segment/tags/tag. Empty means DefaultPrefix.
	// A trailing slash is dropped.
	Prefix string
	// RequestTimeout bounds each call whose context has no deadline: etcd's
	// client waits for a connection forever otherwise. Zero means 5s; negative
	// means no bound. A call that runs out of time fails with an error matching
	// bound.ErrNoAnswer and context.DeadlineExceeded.
	RequestTimeout time.Duration
}

// Store is a segment.Store in etcd. It is safe for concurrent use.
type Store struct {
	cli    *clientv3.Client
	prefix string // Options.Prefix + "/segment/"
	now    func() time.Time
	conn   *etcdconn.Conn // cli with its bounds; Close closes cli if Open made it
}

var _ segment.Store = (*Store)(nil)

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
	return etcdconn.Kind{Package: "segment/etcdstore", DefaultPrefix: DefaultPrefix,
		Probe: func(p string) string { return p + "/segment/tags/" }}
}

// Open connects to the etcd cluster o names, checks that it answers, and returns a
// store that closes the connection on Close.
func Open(ctx context.Context, o Options) (*Store, error) {
	return newStore(etcdconn.Open(ctx, etcdconn.Options(o), kind()))
}

// New returns a store using cli, which stays the caller's: Close does not close it.
func New(cli *clientv3.Client, opts Options) (*Store, error) {
	return newStore(etcdconn.New(cli, etcdconn.Options(opts), kind()))
}

func newStore(c *etcdconn.Conn, err error) (*Store, error) {
	if err != nil {
		return nil, err
	}
	return &Store{conn: c, cli: c.Cli, prefix: c.Prefix + "/segment/", now: time.Now}, nil
}

// Close closes the client Open made; it does nothing for a store made by New.
func (s *Store) Close() error { return s.conn.Close() }

func (s *Store) tagsPrefix() string               { return s.prefix + "tags/" }
func (s *Store) returnedRoot() string             { return s.prefix + "returned/" }
func (s *Store) tagKey(tag string) string         { return s.tagsPrefix() + tag }
func (s *Store) returnedPrefix(tag string) string { return s.returnedRoot() + tag + "/" }
func (s *Store) returnedKey(tag string, first int64) string {
	return s.returnedPrefix(tag) + pad(first)
}

// pad writes a counter value in 19 digits, the width of 2^63-1, so that keys sort
// as the numbers.
func pad(v int64) string { return fmt.Sprintf("%019d", v) }

// record is the value of a tag's key.
type record struct {
	Max     int64  `json:"max"`
	Step    int64  `json:"step"`
	Desc    string `json:"description,omitempty"`
	Updated int64  `json:"updated"` // Unix ms, by the writing client's clock
}

func (s *Store) encode(r record) string {
	r.Updated = s.now().UnixMilli()
	b, _ := json.Marshal(r) // cannot fail: ints and a string
	return string(b)
}

// decode reads a tag's record from the result of reading its key; ok is false when the tag
// does not exist.
func decode(kvs []*mvccpb.KeyValue) (r record, rev int64, ok bool, err error) {
	if len(kvs) == 0 {
		return r, 0, false, nil
	}
	kv := kvs[0]
	if err := json.Unmarshal(kv.Value, &r); err != nil || r.Max < 0 || r.Step < 1 {
		return r, 0, false, fmt.Errorf("the record %s is malformed (%q); fix or delete it", kv.Key, kv.Value)
	}
	return r, kv.ModRevision, true, nil
}

// parseFirst reads the rest of a returned key after its tag's prefix: exactly 19
// digits. Keys of tags nested below the tag ("a/0000000000000000001/..." below
// "a") do not parse.
func parseFirst(rest string) (int64, bool) {
	if len(rest) != 19 {
		return 0, false
	}
	v, ok := digits(rest)
	return v, ok && v >= 1
}

// digits reads a non-negative int64 written with digits only.
func digits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// parseReturned reads a returned key's rest after the returned root
// ("tag/first") and its value (last).
func parseReturned(rest, value string) (tag string, b segment.Block, ok bool) {
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", b, false
	}
	first, ok1 := parseFirst(rest[i+1:])
	last, ok2 := digits(value)
	if !ok1 || !ok2 || last < first || segmentstore.CheckTagName(rest[:i]) != nil {
		return "", b, false
	}
	return rest[:i], segment.Block{First: first, Last: last, Returned: true}, true
}

func unknown(op, tag string) error {
	return fmt.Errorf("segment/etcdstore: %s %s: %w; create it first", op, tag, segment.ErrUnknownTag)
}

// backoff waits a little before the attempt-th retry of a transaction that lost
// to another caller: a random pause, growing to 50 ms, that spreads the rivals out
// so that a caller that keeps losing does not keep colliding.
func backoff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return ctx.Err()
	}
	return retry.Backoff{First: time.Millisecond, Max: 50 * time.Millisecond}.Wait(ctx, attempt-1)
}

func conflict(n int) error {
	return fmt.Errorf("gave up after %d transactions: other callers kept changing the tag first; retry, or use fewer allocators per tag with larger steps", n)
}

// Take claims the lowest returned block above floor, or n fresh values above
// max(Max, floor); see segment.Store. Each attempt is one transaction that
// compares the tag record's ModRevision (and, for a returned block, the block's
// key), so two callers never get one value.
func (s *Store) Take(ctx context.Context, tag string, n, floor, limit int64) (_ segment.Block, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if limit, err = segmentstore.CheckTake(tag, n, floor, limit); err != nil {
		return segment.Block{}, err
	}
	b, err := s.take(ctx, tag, n, floor, limit)
	if err != nil {
		if errors.Is(err, segment.ErrUnknownTag) {
			return b, unknown("take from", tag)
		}
		return b, fmt.Errorf("segment/etcdstore: take %d from %s: %w", n, tag, err)
	}
	return b, nil
}

func (s *Store) take(ctx context.Context, tag string, n, floor, limit int64) (segment.Block, error) {
	tk, rp := s.tagKey(tag), s.returnedPrefix(tag)
	end := clientv3.GetPrefixRangeEnd(rp)
	from := end // no block is above 2^63-1
	if floor < 1<<63-1 {
		from = rp + pad(floor+1)
	}
	reads := []clientv3.Op{clientv3.OpGet(tk), clientv3.OpGet(from, clientv3.WithRange(end), clientv3.WithLimit(peek))}
	r, err := s.cli.Txn(ctx).Then(reads...).Commit()
	for attempt := 1; ; attempt++ {
		if err != nil {
			return segment.Block{}, err
		}
		rec, rev, ok, err := decode(r.Responses[0].GetResponseRange().Kvs)
		if err != nil {
			return segment.Block{}, err
		}
		if !ok {
			return segment.Block{}, segment.ErrUnknownTag
		}
		kv, b, err := s.lowest(ctx, rp, end, r.Responses[1].GetResponseRange(), r.Header.Revision)
		if err != nil {
			return segment.Block{}, err
		}
		txn := s.cli.Txn(ctx)
		if kv != nil {
			b.Step = rec.Step
			txn = txn.If(clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision), clientv3.Compare(clientv3.ModRevision(tk), "=", rev)).
				Then(clientv3.OpDelete(string(kv.Key)))
		} else {
			if b, err = segmentstore.FreshBlock(rec.Max, floor, n, limit); err != nil {
				return segment.Block{}, err
			}
			b.Step = rec.Step
			rec.Max = b.Last
			txn = txn.If(clientv3.Compare(clientv3.ModRevision(tk), "=", rev)).Then(clientv3.OpPut(tk, s.encode(rec)))
		}
		resp, err := txn.Else(reads...).Commit()
		if err != nil {
			return segment.Block{}, err
		}
		if resp.Succeeded {
			return b, nil
		}
		if attempt == attempts {
			return segment.Block{}, conflict(attempt)
		}
		if err := backoff(ctx, attempt); err != nil {
			return segment.Block{}, err
		}
		r = (*clientv3.TxnResponse)(resp)
	}
}

// lowest finds the first returned key of the tag in a range response that began
// at the lowest key above the floor, reading on (at revision rev) past keys of
// nested tags when the response holds none of its own.
func (s *Store) lowest(ctx context.Context, rp, end string, rr *etcdserverpb.RangeResponse, rev int64) (*mvccpb.KeyValue, segment.Block, error) {
	for {
		for _, kv := range rr.Kvs {
			first, ok1 := parseFirst(string(kv.Key[len(rp):]))
			last, ok2 := digits(string(kv.Value))
			if ok1 && ok2 && last >= first {
				return kv, segment.Block{First: first, Last: last, Returned: true}, nil
			}
		}
		if !rr.More || len(rr.Kvs) == 0 {
			return nil, segment.Block{}, nil
		}
		next := string(rr.Kvs[len(rr.Kvs)-1].Key) + "\x00"
		g, err := s.cli.Get(ctx, next, clientv3.WithRange(end), clientv3.WithLimit(etcdconn.PageSize), clientv3.WithRev(rev))
		if err != nil {
			return nil, segment.Block{}, err
		}
		rr = (*etcdserverpb.RangeResponse)(g)
	}
}

// Return adds b to the tag's returned blocks, in a transaction that compares the
// tag record's ModRevision and updates it. It refuses a block above the tag's Max
// or one that overlaps a block returned before, since handing those out could
// issue a value twice.
func (s *Store) Return(ctx context.Context, tag string, b segment.Block) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckReturn(tag, b); err != nil {
		return err
	}
	if err := s.ret(ctx, tag, b); err != nil {
		if errors.Is(err, segment.ErrUnknownTag) {
			return unknown("return to", tag)
		}
		return fmt.Errorf("segment/etcdstore: return %d..%d to %s: %w", b.First, b.Last, tag, err)
	}
	return nil
}

func (s *Store) ret(ctx context.Context, tag string, b segment.Block) error {
	tk, rp := s.tagKey(tag), s.returnedPrefix(tag)
	for attempt := 1; ; attempt++ {
		r, err := s.cli.Get(ctx, tk)
		if err != nil {
			return err
		}
		rec, rev, ok, err := decode(r.Kvs)
		if err != nil {
			return err
		}
		if !ok {
			return segment.ErrUnknownTag
		}
		if b.Last > rec.Max {
			return fmt.Errorf("the tag's max is %d: a block above it was never handed out", rec.Max)
		}
		// Only a Return adds returned keys, and it changes the tag record, so the
		// keys read at the record's revision are all there are when the
		// transaction's comparison holds.
		kvs, _, err := etcdconn.RangeAll(ctx, s.cli, rp, r.Header.Revision)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			first, ok1 := parseFirst(string(kv.Key[len(rp):]))
			last, ok2 := digits(string(kv.Value))
			if ok1 && ok2 && first <= b.Last && b.First <= last {
				return fmt.Errorf("it overlaps the returned block %d..%d; a block can be returned once", first, last)
			}
		}
		rk := s.returnedKey(tag, b.First)
		resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(tk), "=", rev), clientv3.Compare(clientv3.CreateRevision(rk), "=", 0)).
			Then(clientv3.OpPut(rk, strconv.FormatInt(b.Last, 10)), clientv3.OpPut(tk, s.encode(rec))).Commit()
		if err != nil {
			return err
		}
		if resp.Succeeded {
			return nil
		}
		if attempt == attempts {
			return conflict(attempt)
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// Create makes a tag; see segment.Store.
func (s *Store) Create(ctx context.Context, t segment.Tag) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	tk := s.tagKey(t.Name)
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(tk), "=", 0)).
		Then(clientv3.OpPut(tk, s.encode(record{Max: t.Max, Step: t.Step, Desc: t.Description}))).Commit()
	if err != nil {
		return fmt.Errorf("segment/etcdstore: create %s: %w", t.Name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("segment/etcdstore: create %s: %w", t.Name, segment.ErrTagExists)
	}
	return nil
}

// SetStep changes a tag's step; see segment.Store.
func (s *Store) SetStep(ctx context.Context, tag string, step int64) (err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckSetStep(tag, step); err != nil {
		return err
	}
	tk := s.tagKey(tag)
	g, err := s.cli.Get(ctx, tk)
	if err != nil {
		return fmt.Errorf("segment/etcdstore: set step of %s: %w", tag, err)
	}
	kvs := g.Kvs
	for attempt := 1; ; attempt++ {
		rec, rev, ok, err := decode(kvs)
		if err != nil {
			return fmt.Errorf("segment/etcdstore: set step of %s: %w", tag, err)
		}
		if !ok {
			return unknown("set step of", tag)
		}
		rec.Step = step
		resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(tk), "=", rev)).
			Then(clientv3.OpPut(tk, s.encode(rec))).Else(clientv3.OpGet(tk)).Commit()
		if err != nil {
			return fmt.Errorf("segment/etcdstore: set step of %s: %w", tag, err)
		}
		if resp.Succeeded {
			return nil
		}
		if attempt == attempts {
			return fmt.Errorf("segment/etcdstore: set step of %s: %w", tag, conflict(attempt))
		}
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("segment/etcdstore: set step of %s: %w", tag, err)
		}
		kvs = resp.Responses[0].GetResponseRange().Kvs
	}
}

// Tags lists the tags, by name, read at one revision.
func (s *Store) Tags(ctx context.Context) (_ []segment.Tag, err error) {
	ctx, end := s.conn.Call.Start(ctx)
	defer end(&err)
	tp, rr := s.tagsPrefix(), s.returnedRoot()
	tkvs, rev, err := etcdconn.RangeAll(ctx, s.cli, tp, 0)
	if err != nil {
		return nil, fmt.Errorf("segment/etcdstore: tags: %w", err)
	}
	rkvs, _, err := etcdconn.RangeAll(ctx, s.cli, rr, rev)
	if err != nil {
		return nil, fmt.Errorf("segment/etcdstore: tags: %w", err)
	}
	returned := make(map[string]int64)
	for _, kv := range rkvs {
		if tag, b, ok := parseReturned(string(kv.Key[len(rr):]), string(kv.Value)); ok {
			returned[tag] += b.Len()
		}
	}
	tags := make([]segment.Tag, 0, len(tkvs))
	for _, kv := range tkvs { // sorted by key, so by name
		var rec record
		name := string(kv.Key[len(tp):])
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("segment/etcdstore: tags: the record %s is malformed (%q); fix or delete it", kv.Key, kv.Value)
		}
		tags = append(tags, segment.Tag{Name: name, Max: rec.Max, Step: rec.Step, Description: rec.Desc,
			Updated: time.UnixMilli(rec.Updated), Returned: returned[name]})
	}
	return tags, nil
}

// Identity is the etcd cluster's ID and the prefix.
func (s *Store) Identity(ctx context.Context) (segment.StoreIdentity, error) {
	id, err := s.conn.Identity(ctx)
	if err != nil {
		return segment.StoreIdentity{}, fmt.Errorf("segment/etcdstore: %w", err)
	}
	return segment.StoreIdentity{ID: id}, nil
}
