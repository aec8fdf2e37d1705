package leafzk

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/internal/zkconn"
)

// ParseURL reads a store URL into Options for Open, without connecting:
//
//	leafzk://host:port[,host:port...]/{leaf.name}?addr=ip:port[&margin=10s&fresh=10s&probe_port=8080&probe_timeout=2s&dial_timeout=5s&request_timeout=5s]
//	leafzk://host:port[,host:port...]/{leaf.name}?replace=ip:port[&...]
//
// The hosts are the ZooKeeper ensemble Leaf uses (leaf.snowflake.zk.address), a
// host without a port getting 2181; the path is Leaf's leaf.name, whose registry is
// /snowflake/{leaf.name}/forever. addr is the ip:port this server is known by in
// the registry, as Leaf would register a server listening there; replace instead
// names the node of another address to take over (one of the two is needed to
// acquire, neither to list: flurry lease list). margin, fresh, dial_timeout and
// request_timeout set Options.Margin, Options.Fresh and the connection's timeouts;
// probe_port and probe_timeout set Options.ProbePort and Options.ProbeTimeout, and
// probe=off sets Options.NoProbe (unsafe: a Leaf server that runs without writing
// its node is then doubled); other keys are refused.
func ParseURL(rawURL string) (Options, error) {
	o, err := parseURL(rawURL)
	if err != nil {
		return Options{}, fmt.Errorf("lease/leafzk: %w", err)
	}
	return o, nil
}

func parseURL(rawURL string) (Options, error) {
	var o Options
	u, hosts, redacted, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return o, fmt.Errorf("not a leafzk:// URL: %v", err)
	}
	if !strings.EqualFold(u.Scheme, "leafzk") {
		return o, fmt.Errorf("%s: the scheme must be leafzk", redacted)
	}
	if u.Opaque != "" || len(hosts) == 0 {
		return o, fmt.Errorf("%s: name the ZooKeeper servers: leafzk://host:2181[,host:2181]/{leaf.name}?addr=ip:port", redacted)
	}
	o.Name = strings.Trim(u.Path, "/")
	if o.Name == "" || strings.Contains(o.Name, "/") {
		return o, fmt.Errorf("%s: the path must be Leaf's leaf.name, whose servers register under /snowflake/{leaf.name}/forever", redacted)
	}
	q, err := storeurl.NewQuery(u.RawQuery)
	if err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	o.Addr, o.Replace = q.Take("addr"), q.Take("replace")
	q.Duration("margin", &o.Margin)
	q.Duration("fresh", &o.Fresh)
	q.Duration("probe_timeout", &o.ProbeTimeout)
	if p := q.Take("probe_port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return o, fmt.Errorf("%s: probe_port=%s: give the port of the Leaf servers' HTTP (server.port), 1 to 65535", redacted, p)
		}
		o.ProbePort = n
	}
	switch p := q.Take("probe"); p {
	case "", "on":
	case "off":
		o.NoProbe = true
	default:
		return o, fmt.Errorf("%s: probe=%s: give probe=on (the default) or probe=off", redacted, p)
	}
	if err := q.Err(); err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	o.ZK.DialTimeout = 5 * time.Second
	q.Duration("dial_timeout", &o.ZK.DialTimeout)
	q.Duration("request_timeout", &o.ZK.RequestTimeout)
	if err := q.Remaining(); err != nil {
		return o, fmt.Errorf("%s: %v; the keys are addr, replace, margin, fresh, probe, probe_port, probe_timeout, dial_timeout and request_timeout", redacted, err)
	}
	if u.User != nil {
		return o, fmt.Errorf("%s: flurry does not authenticate to ZooKeeper; drop the user and password from the URL", redacted)
	}
	o.ZK.Servers = hosts.Addrs(zkconn.DefaultPort)
	if err := o.check(); err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	return o, nil
}

// Bounds of Margin and Fresh. A margin must cover at least Leaf's interval
// between writes; a node must stay alone for longer than that interval plus a
// write for its server to be taken for stopped.
const (
	minMargin = leafInterval
	minFresh  = leafInterval + 2*time.Second
	maxMargin = time.Hour
)
