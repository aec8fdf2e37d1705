// Package etcdconn holds what flurry's etcd stores (lease/etcdstore and
// segment/etcdstore) share: their URL form, connecting, and paged reads.
//
// Errors carry no package prefix; the stores add theirs. They never show a password.
package etcdconn

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
)

// Settings are the options every etcd store has; each store's Options has these
// fields, in this order, so that it converts to and from Settings.
type Settings struct {
	// Prefix starts every key.
	Prefix string
	// DialTimeout bounds Open: connecting and the first read. Zero means 5s.
	DialTimeout time.Duration
	// RequestTimeout bounds each store call whose context has no deadline. Zero
	// means 5s (bound.DefaultTimeout); negative means no bound.
	RequestTimeout time.Duration
}

// ParseURL reads a store URL,
//
//	etcd://[user:password@]host:port[,host:port...][/prefix][?dial_timeout=5s&request_timeout=5s]
//
// into a client configuration and the store's settings. The endpoints are spoken
// to over plain HTTP/2 (no TLS). The path, without its first slash, is the key
// prefix and replaces s.Prefix (etcd://h:2379//abs gives the prefix "/abs");
// dial_timeout and request_timeout replace s.DialTimeout and s.RequestTimeout, and
// a zero DialTimeout becomes 5s. Other query keys are refused.
func ParseURL(rawURL string, s Settings) (clientv3.Config, Settings, error) {
	var cfg clientv3.Config
	// The endpoint list is taken out before url.Parse, which refuses some lists
	// ([::1]:2379,[::1]:2380); errors never show the password.
	u, hosts, _, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return cfg, s, fmt.Errorf("not an etcd:// URL: %v", err)
	}
	u.Host = hosts.String()
	if u.Scheme != "etcd" {
		return cfg, s, fmt.Errorf("%s: the scheme must be etcd", u.Redacted())
	}
	if u.Opaque != "" || u.Host == "" {
		return cfg, s, fmt.Errorf("%s: name the endpoints: etcd://host:port[,host:port]", u.Redacted())
	}
	for _, h := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return cfg, s, fmt.Errorf("%s: endpoint %q must be host:port", u.Redacted(), h)
		}
		cfg.Endpoints = append(cfg.Endpoints, "http://"+h)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	if p := strings.TrimPrefix(u.Path, "/"); strings.TrimRight(p, "/") != "" {
		s.Prefix = p
	}
	q := u.Query()
	for _, o := range []struct {
		key string
		d   *time.Duration
	}{{"dial_timeout", &s.DialTimeout}, {"request_timeout", &s.RequestTimeout}} {
		if !q.Has(o.key) {
			continue
		}
		d, err := time.ParseDuration(q.Get(o.key))
		if err != nil || d <= 0 || len(q[o.key]) > 1 {
			return cfg, s, fmt.Errorf("%s: %s must be one duration such as 5s", u.Redacted(), o.key)
		}
		*o.d = d
		q.Del(o.key)
	}
	if len(q) > 0 {
		var ks []string
		for k := range q {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return cfg, s, fmt.Errorf("%s: unknown option %s; the options are dial_timeout and request_timeout", u.Redacted(), strings.Join(ks, ", "))
	}
	if s.DialTimeout < 0 {
		return cfg, s, fmt.Errorf("DialTimeout %v is negative", s.DialTimeout)
	}
	if s.DialTimeout == 0 {
		s.DialTimeout = 5 * time.Second
	}
	cfg.DialTimeout = s.DialTimeout
	cfg.Logger = zap.NewNop() // errors are returned, not logged
	return cfg, s, nil
}

// Connect makes a client for cfg and checks that the cluster answers by reading
// probe, within cfg.DialTimeout or ctx's deadline, whichever comes first. The
// client dials lazily (etcd's client has since v3.5), so without that read an
// unreachable cluster would only show on the first store call, and that call would
// wait forever for a connection. rawURL is for messages only; they show it without
// its password.
func Connect(ctx context.Context, cfg clientv3.Config, rawURL, probe string) (_ *clientv3.Client, err error) {
	ctx, end := Call(rawURL, Settings{}).Dial(ctx, cfg.DialTimeout)
	defer end(&err)
	if d, ok := ctx.Deadline(); ok && time.Until(d) < cfg.DialTimeout {
		cfg.DialTimeout = max(time.Until(d), time.Millisecond)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd store %s: %w", redact(rawURL), err)
	}
	if _, err := cli.Get(ctx, probe); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd store %s: %w", redact(rawURL), err)
	}
	return cli, nil
}

// Call describes the calls of the store rawURL names, with s's RequestTimeout; see
// package bound.
func Call(rawURL string, s Settings) bound.Call {
	return bound.Call{Store: "etcd store " + redact(rawURL), Timeout: s.RequestTimeout, Hint: "is etcd running there?"}
}

// ClientCall is Call for a store made on a caller's client: the store is named by
// the client's endpoints and the prefix.
func ClientCall(cli *clientv3.Client, prefix string, s Settings) bound.Call {
	var hosts []string
	if cli != nil {
		for _, e := range cli.Endpoints() {
			_, h, ok := strings.Cut(e, "://")
			if !ok {
				h = e
			}
			hosts = append(hosts, h)
		}
	}
	return Call("etcd://"+strings.Join(hosts, ",")+"/"+prefix, s)
}

func redact(rawURL string) string { return storeurl.Redact(rawURL) }

// PageSize is how many keys RangeAll reads per request.
const PageSize = 1000

// RangeAll reads every key under prefix at revision rev (0: now), in pages of
// PageSize keys, and returns them with the revision read.
func RangeAll(ctx context.Context, cli *clientv3.Client, prefix string, rev int64) ([]*mvccpb.KeyValue, int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	key := prefix
	var out []*mvccpb.KeyValue
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(PageSize)}
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
