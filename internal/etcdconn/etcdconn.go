// Package etcdconn holds what flurry's etcd stores (lease/etcdstore and
// segment/etcdstore) share: their URL form, their New and Open, and paged reads.
//
// Errors carry no package prefix; the stores add theirs. They never show a password.
package etcdconn

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
)

// Options are the fields of every etcd store's Options, in this order, so that
// each store's Options converts to and from it.
type Options struct {
	Client         clientv3.Config
	Prefix         string
	RequestTimeout time.Duration
}

// ParseURL reads a store URL,
//
//	etcd://[user:password@]host:port[,host:port...][/prefix][?dial_timeout=5s&request_timeout=5s]
//
// into a store's Options. The endpoints are spoken to over plain HTTP/2 (no TLS).
// The path, without its first slash, is the key prefix (etcd://h:2379//abs gives
// the prefix "/abs"); dial_timeout sets Client.DialTimeout (default 5s) and
// request_timeout sets RequestTimeout. Other query keys are refused. Errors start
// with pkg and never show a password.
func ParseURL(rawURL, pkg string) (Options, error) {
	o, err := parseURL(rawURL)
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", pkg, err)
	}
	return o, nil
}

func parseURL(rawURL string) (Options, error) {
	var o Options
	// The endpoint list is taken out before url.Parse, which refuses some lists
	// ([::1]:2379,[::1]:2380); errors never show the password.
	u, hosts, redacted, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return o, fmt.Errorf("not an etcd:// URL: %v", err)
	}
	u.Host = hosts.String()
	if u.Scheme != "etcd" {
		return o, fmt.Errorf("%s: the scheme must be etcd", redacted)
	}
	if u.Opaque != "" || u.Host == "" {
		return o, fmt.Errorf("%s: name the endpoints: etcd://host:port[,host:port]", redacted)
	}
	for _, h := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return o, fmt.Errorf("%s: endpoint %q must be host:port", redacted, h)
		}
		o.Client.Endpoints = append(o.Client.Endpoints, "http://"+h)
	}
	if u.User != nil {
		o.Client.Username = u.User.Username()
		o.Client.Password, _ = u.User.Password()
	}
	if p := strings.TrimPrefix(u.Path, "/"); strings.TrimRight(p, "/") != "" {
		o.Prefix = p
	}
	q, err := storeurl.NewQuery(u.RawQuery)
	if err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	o.Client.DialTimeout = 5 * time.Second
	q.Duration("dial_timeout", &o.Client.DialTimeout)
	q.Duration("request_timeout", &o.RequestTimeout)
	if err := q.Remaining(); err != nil {
		return o, fmt.Errorf("%s: %v; the keys are dial_timeout and request_timeout", redacted, err)
	}
	return o, nil
}

// Conn is an etcd store's client with its key prefix: what New and Open of every
// etcd store make.
type Conn struct {
	Cli    *clientv3.Client
	Prefix string     // without a trailing slash; never empty
	Call   bound.Call // bounds and names each store call
	owned  bool       // Close closes Cli
}

// Close closes the client Open made; a caller's client stays open.
func (c *Conn) Close() error {
	if c.owned {
		return c.Cli.Close()
	}
	return nil
}

// Kind names an etcd store package for New and Open.
type Kind struct {
	Package       string // starts every error: "lease/etcdstore"
	DefaultPrefix string // the key prefix of an empty Options.Prefix
	// Probe returns the key Open reads to check that the cluster answers.
	Probe func(prefix string) string
}

func (k Kind) prefix(o Options) string {
	return cmp.Or(strings.TrimRight(o.Prefix, "/"), k.DefaultPrefix)
}

// New is a store's New on a caller's client, which stays the caller's: Close does
// not close it.
func New(cli *clientv3.Client, o Options, k Kind) (*Conn, error) {
	if cli == nil {
		return nil, fmt.Errorf("%s: New needs a client", k.Package)
	}
	p := k.prefix(o)
	return &Conn{Cli: cli, Prefix: p, Call: call(clientName(cli, p), o.RequestTimeout)}, nil
}

// Open is a store's Open: it makes a client for o.Client and checks that the
// cluster answers by reading k.Probe, within o.Client.DialTimeout (zero means 5s)
// or ctx's deadline, whichever comes first. The client dials lazily (etcd's client
// has since v3.5), so without that read an unreachable cluster would only show on
// the first store call, and that call would wait forever for a connection.
//
// The client reconnects within half a second of a store's return, and a call that
// gets no answer closes the connections that went silent (see dialOptions); a
// client a caller gives New keeps its own settings.
func Open(ctx context.Context, o Options, k Kind) (*Conn, error) {
	c, err := open(ctx, o, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Package, err)
	}
	return c, nil
}

func open(ctx context.Context, o Options, k Kind) (_ *Conn, err error) {
	cfg := o.Client
	if cfg.DialTimeout < 0 {
		return nil, fmt.Errorf("DialTimeout %v is negative", cfg.DialTimeout)
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop() // errors are returned, not logged
	}
	conns := new(bound.Conns)
	cfg.DialOptions = append(dialOptions(conns), cfg.DialOptions...)
	p := k.prefix(o)
	name := configName(cfg, p)
	ctx, end := call(name, 0).Dial(ctx, cfg.DialTimeout)
	defer end(&err)
	if d, ok := ctx.Deadline(); ok && time.Until(d) < cfg.DialTimeout {
		cfg.DialTimeout = max(time.Until(d), time.Millisecond)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd store %s: %w", name, err)
	}
	if _, err := cli.Get(ctx, k.Probe(p)); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd store %s: %w", name, err)
	}
	c := &Conn{Cli: cli, Prefix: p, Call: call(name, o.RequestTimeout), owned: true}
	c.Call.OnNoAnswer = func(start time.Time) { conns.CloseSilent(start) }
	return c, nil
}

// call describes the calls of the store named name; see package bound.
func call(name string, timeout time.Duration) bound.Call {
	return bound.Call{Store: "etcd store " + name, Timeout: timeout, Hint: "is etcd running there?"}
}

// configName names a store by its endpoints and prefix, without a password.
func configName(cfg clientv3.Config, prefix string) string { return name(cfg.Endpoints, prefix) }

// clientName is configName for a caller's client.
func clientName(cli *clientv3.Client, prefix string) string { return name(cli.Endpoints(), prefix) }

func name(endpoints []string, prefix string) string {
	hosts := make([]string, 0, len(endpoints))
	for _, e := range endpoints {
		_, h, ok := strings.Cut(e, "://")
		if !ok {
			h = e
		}
		hosts = append(hosts, h)
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + prefix
}

// PageSize is how many keys RangeAll reads per request.
const PageSize = 1000

// RangeAll reads every key under prefix at revision rev (0: now), in pages of
// PageSize keys, and returns them with the revision read. more are options of
// each page's read, such as clientv3.WithKeysOnly.
func RangeAll(ctx context.Context, cli *clientv3.Client, prefix string, rev int64, more ...clientv3.OpOption) ([]*mvccpb.KeyValue, int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	key := prefix
	var out []*mvccpb.KeyValue
	for {
		opts := append([]clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(PageSize)}, more...)
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := cli.Get(ctx, key, opts...)
		if err != nil {
			return nil, 0, err
		}
		if rev == 0 {
			rev = r.Header.Revision
		}
		out = append(out, r.Kvs...)
		if !r.More || len(r.Kvs) == 0 {
			return out, rev, nil
		}
		key = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}
