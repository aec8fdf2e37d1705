// Package zkconn holds what flurry's ZooKeeper clients share: the zk:// URL, Open
// with a dial timeout and a one-line error that names the ensemble, calls bounded
// by a context (go-zookeeper's own calls take none and can wait for minutes), and
// reconnecting within half a second of an ensemble's return.
//
// Errors carry no package prefix; the packages that use it add theirs. ZooKeeper's
// own errors (zk.ErrNoNode, zk.ErrBadVersion, ...) come back as they are, so that
// callers can branch on them with errors.Is.
package zkconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
)

// DefaultPort is the port of a server named without one.
const DefaultPort = "2181"

// Options configure Open. ParseURL fills them from a zk:// URL.
type Options struct {
	// Servers are the members of the ensemble, host:port each; name every member,
	// so that the client moves to another when one fails.
	Servers []string
	// Prefix is the path under which the caller keeps its nodes, without its
	// leading slash: "flurry/lease". Empty means the Kind's DefaultPrefix.
	Prefix string
	// DialTimeout bounds Open: connecting to a member and getting a session, along
	// with Open's context. Zero means 5s.
	DialTimeout time.Duration
	// RequestTimeout bounds each call whose context has no deadline. Zero means 5s;
	// negative means no bound. A call that runs out of time fails with an error
	// matching bound.ErrNoAnswer and context.DeadlineExceeded.
	RequestTimeout time.Duration
	// SessionTimeout is the ZooKeeper session timeout the client asks for; the
	// server keeps it within 2 to 20 of its ticks (4s to 40s with the usual 2s
	// tick). The client gives up a connection that stayed silent for two thirds of
	// the timeout the server granted, and moves to another member. Zero means 4s.
	// Nothing of flurry's depends on the session living: its nodes are persistent.
	SessionTimeout time.Duration
}

// Kind names the package that opens a connection, for messages and defaults.
type Kind struct {
	Package       string // starts every error: "lease/zkstore"
	DefaultPrefix string // the prefix of an empty Options.Prefix: "flurry/lease"
}

// ParseURL reads a URL of the form
//
//	zk://host[:port][,host[:port]...][/prefix][?dial_timeout=5s&request_timeout=5s]
//
// into Options. A host without a port gets 2181. The path, without its first
// slash, is the prefix: letters, digits and "_-.:=", in components separated by
// slashes, none of them "." or "..", and not under /zookeeper, which is
// ZooKeeper's own. Other query keys, and a user or password (the client does not
// authenticate), are refused. Errors start with pkg and never show a password.
func ParseURL(rawURL, pkg string) (Options, error) {
	o, err := parseURL(rawURL)
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", pkg, err)
	}
	return o, nil
}

func parseURL(rawURL string) (Options, error) {
	var o Options
	u, hosts, redacted, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return o, fmt.Errorf("not a zk:// URL: %v", err)
	}
	if u.Scheme != "zk" {
		return o, fmt.Errorf("%s: the scheme must be zk", redacted)
	}
	if u.Opaque != "" || len(hosts) == 0 {
		return o, fmt.Errorf("%s: name the servers: zk://host:port[,host:port]", redacted)
	}
	if u.User != nil {
		return o, fmt.Errorf("%s: flurry does not authenticate to ZooKeeper; drop the user and password from the URL (and keep the ensemble on a private network)", redacted)
	}
	o.Servers = hosts.Addrs(DefaultPort)
	if o.Prefix, err = cleanPrefix(u.Path); err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	q, err := storeurl.NewQuery(u.RawQuery)
	if err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	o.DialTimeout = 5 * time.Second
	q.Duration("dial_timeout", &o.DialTimeout)
	q.Duration("request_timeout", &o.RequestTimeout)
	if err := q.Remaining(); err != nil {
		return o, fmt.Errorf("%s: %v; the keys are dial_timeout and request_timeout", redacted, err)
	}
	return o, nil
}

// cleanPrefix checks a prefix and drops its outer slashes.
func cleanPrefix(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	for i, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return "", fmt.Errorf("prefix %q: empty, . and .. are not path components ZooKeeper takes", p)
		}
		if i == 0 && c == "zookeeper" {
			return "", fmt.Errorf("prefix %q: /zookeeper is ZooKeeper's own", p)
		}
		for _, r := range c {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:=", r)) {
				return "", fmt.Errorf("prefix %q: use letters, digits and _-.:= in its components", p)
			}
		}
	}
	return p, nil
}

// Conn is a ZooKeeper client with its path prefix: what Open makes. Its methods
// take a context and return when it ends, whatever the client does.
type Conn struct {
	// ZK is the client. Its own methods take no context and can wait for minutes;
	// use Conn's.
	ZK *zk.Conn
	// Prefix is the caller's root path: a leading slash, none at the end,
	// "/flurry/lease".
	Prefix string
	// Call bounds and names each call of the caller (see package bound): its Store
	// is "ZooKeeper store zk://host:2181/prefix".
	Call bound.Call

	servers string // "h1:2181,h2:2181", for messages
	link    *link
	events  <-chan zk.Event // closed when the client's connection loop has ended
}

// Open connects to the ensemble o names and returns once the client has a
// session, within o.DialTimeout (zero means 5s) or ctx's deadline, whichever comes
// first. Otherwise it fails with "cannot reach ZooKeeper at host:port within 5s",
// and the last connection error.
//
// The client reconnects by itself, to the next member first, then pausing 100ms to
// 400ms between rounds of the members, so that it finds a member that is back
// within half a second; a member that accepts a connection and does not answer is
// given up after a second. A call that runs out of time closes the connection
// that stayed silent through it (bound.Conns), and the client moves to another
// member.
func Open(ctx context.Context, o Options, k Kind) (*Conn, error) {
	c, err := open(ctx, o, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Package, err)
	}
	return c, nil
}

func open(ctx context.Context, o Options, k Kind) (*Conn, error) {
	if len(o.Servers) == 0 {
		return nil, errors.New("name the ZooKeeper servers (Options.Servers)")
	}
	if o.DialTimeout < 0 || o.SessionTimeout < 0 {
		return nil, fmt.Errorf("DialTimeout %v and SessionTimeout %v must not be negative", o.DialTimeout, o.SessionTimeout)
	}
	prefix, err := cleanPrefix(o.Prefix)
	if err != nil {
		return nil, err
	}
	prefix = "/" + cmp.Or(prefix, k.DefaultPrefix)
	dial := cmp.Or(o.DialTimeout, 5*time.Second)
	servers := strings.Join(o.Servers, ",")
	l := newLink()
	cli, events, err := zk.Connect(o.Servers, cmp.Or(o.SessionTimeout, 4*time.Second),
		zk.WithDialer(l.dial), zk.WithHostProvider(l.hosts), zk.WithEventCallback(l.event),
		zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	c := &Conn{ZK: cli, Prefix: prefix, servers: servers, link: l, events: events}
	c.Call = bound.Call{Store: "ZooKeeper store zk://" + servers + prefix, Timeout: o.RequestTimeout,
		Hint: "is ZooKeeper running there?", OnNoAnswer: func(start time.Time) { l.conns.CloseSilent(start) }}
	wctx, cancel := context.WithTimeout(ctx, dial)
	defer cancel()
	if err := l.wait(wctx); err != nil {
		c.Close()
		within := dial
		if d, ok := ctx.Deadline(); ok && time.Until(d) < dial {
			within = max(time.Until(d), 0)
		}
		return nil, &UnreachableError{Servers: servers, Within: within.Round(time.Millisecond), Last: l.lastErr(), ctxErr: err}
	}
	return c, nil
}

// Close ends the session and closes the connection. It can take a second when
// no member answers.
func (c *Conn) Close() error {
	c.link.close()
	c.ZK.Close()
	return nil
}

// Servers returns the members as the caller named them, "h1:2181,h2:2181".
func (c *Conn) Servers() string { return c.servers }

// UnreachableError is the error of a call, or of Open, that ended while the client
// had no session with any member: none could be reached, or none served (a member
// without a quorum refuses clients). It matches bound.ErrNoAnswer and
// context.DeadlineExceeded when its context's deadline passed.
type UnreachableError struct {
	Servers string        // "h1:2181,h2:2181"
	Within  time.Duration // Open's bound; zero for a call
	Last    error         // the last connection error, nil when none was seen
	ctxErr  error
}

func (e *UnreachableError) Error() string {
	s := "cannot reach ZooKeeper at " + e.Servers
	if e.Within > 0 {
		s += fmt.Sprintf(" within %v", e.Within)
	}
	if e.Last != nil {
		s += ": " + e.Last.Error()
	} else {
		s += " (is it running there?)"
	}
	return s
}

// Unwrap returns the context's error and the last connection error.
func (e *UnreachableError) Unwrap() []error {
	out := []error{e.ctxErr}
	if e.Last != nil {
		out = append(out, e.Last)
	}
	return out
}

// Is makes errors.Is(err, bound.ErrNoAnswer) true when the deadline passed.
func (e *UnreachableError) Is(target error) bool {
	return target == bound.ErrNoAnswer && errors.Is(e.ctxErr, context.DeadlineExceeded)
}

// do runs f on the client once it has a session, and returns when f does or ctx
// ends. f keeps running after ctx ends, until the client answers or drops the
// connection; it must write only variables the caller reads after a nil error.
func (c *Conn) do(ctx context.Context, f func(*zk.Conn) error) error {
	if err := c.link.wait(ctx); err != nil {
		return &UnreachableError{Servers: c.servers, Last: c.link.lastErr(), ctxErr: err}
	}
	done := make(chan error, 1)
	go func() { done <- f(c.ZK) }()
	select {
	case err := <-done:
		switch {
		case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer):
			return fmt.Errorf("the connection to ZooKeeper at %s was lost during the call: %w", c.servers, err)
		case errors.Is(err, zk.ErrClosing):
			return fmt.Errorf("the ZooKeeper client is closed: %w", err)
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read is do for calls that change nothing: when the connection they went out on
// was lost (closed because it went silent, or dropped by the member), they are
// sent again on the next one while ctx allows, so a read right after a member
// comes back is answered rather than failed by the old connection's end.
func (c *Conn) read(ctx context.Context, f func(*zk.Conn) error) error {
	for attempt := 0; ; attempt++ {
		err := c.do(ctx, f)
		lost := errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || errors.Is(err, bound.ErrClosedSilent)
		if !lost || attempt == 3 || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(time.Duration(attempt+1) * 25 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// Get returns a node's data and stat.
func (c *Conn) Get(ctx context.Context, path string) (data []byte, st *zk.Stat, err error) {
	var d []byte
	var s *zk.Stat
	err = c.read(ctx, func(z *zk.Conn) (err error) { d, s, err = z.Get(path); return err })
	if err != nil {
		return nil, nil, err
	}
	return d, s, nil
}

// Node is one node GetAll read.
type Node struct {
	Path string
	Data []byte
	Stat *zk.Stat // nil when the node does not exist
}

// getAllAtOnce is how many reads GetAll keeps in flight; the client pipelines
// them on its one connection.
const getAllAtOnce = 64

// GetAll reads the nodes of paths, several at once, in their order. A node that
// does not exist has a nil Stat; any other error fails the whole read.
func (c *Conn) GetAll(ctx context.Context, paths []string) ([]Node, error) {
	out := make([]Node, len(paths))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, getAllAtOnce)
	)
	for i, p := range paths {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			d, s, err := c.Get(ctx, p)
			if errors.Is(err, zk.ErrNoNode) {
				d, s, err = nil, nil, nil
			}
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
			out[i] = Node{Path: p, Data: d, Stat: s}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Children returns the names of a node's children.
func (c *Conn) Children(ctx context.Context, path string) ([]string, error) {
	var names []string
	err := c.read(ctx, func(z *zk.Conn) (err error) { names, _, err = z.Children(path); return err })
	if err != nil {
		return nil, err
	}
	return names, nil
}

// Set writes a node's data when its version is version (-1: any), and returns its
// new stat: Mtime is the ZooKeeper leader's clock when it committed the write.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zk.Stat, error) {
	var s *zk.Stat
	err := c.do(ctx, func(z *zk.Conn) (err error) { s, err = z.Set(path, data, version); return err })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Create makes a node with flags (0: persistent; zk.FlagSequence, ...) and an open
// ACL, and returns its path (a sequential node's gets its number).
func (c *Conn) Create(ctx context.Context, path string, data []byte, flags int32) (string, error) {
	var p string
	err := c.do(ctx, func(z *zk.Conn) (err error) {
		p, err = z.Create(path, data, flags, zk.WorldACL(zk.PermAll))
		return err
	})
	if err != nil {
		return "", err
	}
	return p, nil
}

// CreatePath makes path and each missing parent, as empty persistent nodes; nodes
// that exist already are left as they are.
func (c *Conn) CreatePath(ctx context.Context, path string) error {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		if _, err := c.Create(ctx, p, nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("creating %s: %w", p, err)
		}
	}
	return nil
}

// Exists reports whether a node exists, with its stat when it does.
func (c *Conn) Exists(ctx context.Context, path string) (bool, *zk.Stat, error) {
	var ok bool
	var s *zk.Stat
	err := c.read(ctx, func(z *zk.Conn) (err error) { ok, s, err = z.Exists(path); return err })
	if err != nil {
		return false, nil, err
	}
	return ok, s, nil
}

// Delete removes a node when its version is version (-1: any).
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	return c.do(ctx, func(z *zk.Conn) error { return z.Delete(path, version) })
}

// Multi runs ops (*zk.CreateRequest, *zk.SetDataRequest, *zk.DeleteRequest,
// *zk.CheckVersionRequest) as one transaction: all or none. When one fails, the
// error is that op's (zk.ErrBadVersion, ...), and the responses say which.
func (c *Conn) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	var rs []zk.MultiResponse
	err := c.do(ctx, func(z *zk.Conn) (err error) { rs, err = z.Multi(ops...); return err })
	return rs, err
}

// Epoch returns the leader epoch of a zxid: it changes with each leader the
// ensemble elects.
func Epoch(zxid int64) int64 { return zxid >> 32 }

// quiet drops go-zookeeper's log lines: errors are returned, not logged.
type quiet struct{}

func (quiet) Printf(string, ...any) {}
