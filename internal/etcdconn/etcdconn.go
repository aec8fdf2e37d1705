// Package etcdconn holds what flurry's etcd stores (lease/etcdstore and
// segment/etcdstore) share: their URL form, connecting, and paged reads.
//
// Errors carry no package prefix; the stores add theirs. They never show a password.
package etcdconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Settings are the options every etcd store has; each store's Options has these
// fields, in this order, so that it converts to and from Settings.
type Settings struct {
	// Prefix starts every key.
	Prefix string
	// DialTimeout bounds the first connection. Zero means 5s.
	DialTimeout time.Duration
}

// ParseURL reads a store URL,
//
//	etcd://[user:password@]host:port[,host:port...][/prefix][?dial_timeout=5s]
//
// into a client configuration and the store's settings. The endpoints are spoken
// to over plain HTTP/2 (no TLS). The path, without its first slash, is the key
// prefix and replaces s.Prefix (etcd://h:2379//abs gives the prefix "/abs");
// dial_timeout replaces s.DialTimeout, and a zero DialTimeout becomes 5s. Other
// query keys are refused.
func ParseURL(rawURL string, s Settings) (clientv3.Config, Settings, error) {
	var cfg clientv3.Config
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL, password included
		}
		return cfg, s, fmt.Errorf("not an etcd:// URL: %v", err)
	}
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
	if q.Has("dial_timeout") {
		d, err := time.ParseDuration(q.Get("dial_timeout"))
		if err != nil || d <= 0 {
			return cfg, s, fmt.Errorf("%s: dial_timeout must be a duration such as 5s", u.Redacted())
		}
		s.DialTimeout = d
		q.Del("dial_timeout")
	}
	if len(q) > 0 {
		var ks []string
		for k := range q {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return cfg, s, fmt.Errorf("%s: unknown option %s; the only one is dial_timeout", u.Redacted(), strings.Join(ks, ", "))
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

// Connect makes a client for cfg, its dial timeout cut to ctx's deadline, and
// checks that the cluster answers by reading probe. rawURL is for messages only;
// they show it without its password.
func Connect(ctx context.Context, cfg clientv3.Config, rawURL, probe string) (*clientv3.Client, error) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < cfg.DialTimeout {
		cfg.DialTimeout = max(time.Until(d), time.Millisecond)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(rawURL), err)
	}
	if _, err := cli.Get(ctx, probe); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%s: %w", redact(rawURL), err)
	}
	return cli, nil
}

func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

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
