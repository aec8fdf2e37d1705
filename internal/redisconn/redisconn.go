// Package redisconn holds what flurry's Redis stores (lease/redisstore and
// segment/redisstore) and redisgen share: their URL forms (a server, or a primary
// found through Redis Sentinel), the settings every store has, connecting, and
// running a script followed by WAIT.
//
// Errors carry no package prefix; the stores add theirs. They never show a password.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/storeurl"
)

// Settings are the options every Redis store has, beside its connection.
type Settings struct {
	// Prefix starts every key, inside the hash tag.
	Prefix string
	// WaitReplicas, when above zero, makes every write wait for that many replicas.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Zero means 1s.
	WaitTimeout time.Duration
	// RequestTimeout bounds each store call whose context has no deadline. Zero
	// means 5s (bound.DefaultTimeout); negative means no bound.
	RequestTimeout time.Duration
}

// Config is a parsed Redis URL: the options of a plain client or of a Sentinel
// failover client, and the URL for messages.
type Config struct {
	// Client is set for redis:// and rediss:// URLs.
	Client *redis.Options
	// Failover is set for redis+sentinel:// and rediss+sentinel:// URLs.
	Failover *redis.FailoverOptions
	// Redacted is the URL with its passwords replaced by "xxxxx".
	Redacted string
}

// NewClient makes the client: redis.NewClient, or redis.NewFailoverClient for a
// Sentinel URL. Both are *redis.Client, so WAIT works on either.
func (c Config) NewClient() *redis.Client {
	if c.Failover != nil {
		return redis.NewFailoverClient(c.Failover)
	}
	return redis.NewClient(c.Client)
}

// DialTimeout is the client's dial timeout, go-redis's default (5s) when unset.
func (c Config) DialTimeout() time.Duration {
	d := time.Duration(0)
	if c.Failover != nil {
		d = c.Failover.DialTimeout
	} else if c.Client != nil {
		d = c.Client.DialTimeout
	}
	if d <= 0 {
		d = 5 * time.Second
	}
	return d
}

// Call describes the calls of the store at c, with s's RequestTimeout; see
// package bound.
func (c Config) Call(s Settings) bound.Call {
	hint := "is Redis running there?"
	if c.Failover != nil {
		hint = "are the sentinels running there, and do they know master " + c.Failover.MasterName + "?"
	}
	return bound.Call{Store: "redis store " + c.Redacted, Timeout: s.RequestTimeout, Hint: hint}
}

// ClientCall is Call for a store made on a caller's client.
func ClientCall(client redis.UniversalClient, s Settings) bound.Call {
	name := "redis store"
	if c, ok := client.(*redis.Client); ok && c.Options().Addr != "" {
		name += " " + c.Options().Addr
	}
	return bound.Call{Store: name, Timeout: s.RequestTimeout, Hint: "is Redis running there?"}
}

// Options are a Redis store's Options as New, Open and ParseURL take them: the
// client's configuration (Client or Failover, for Open) and the store's settings.
type Options struct {
	Client   *redis.Options
	Failover *redis.FailoverOptions
	Settings
}

// ParseURL reads a store URL,
//
//	redis://[user:password@]host:port[/db][?prefix=...&wait_replicas=1&wait_timeout=500ms&request_timeout=5s&...]
//	rediss://...   (TLS)
//	redis+sentinel://[[user]:password@]host:26379[,host:26379...]/master[/db][?...]
//	rediss+sentinel://...   (TLS)
//
// into a store's Options: Client or Failover, and the fields of prefix,
// wait_replicas, wait_timeout and request_timeout; the other query keys are the
// client's (see ParseClientURL). The client has ContextTimeoutEnabled set. Errors
// start with prefix and never show a password.
func ParseURL(rawURL, prefix string) (Options, error) {
	o, err := parseURL(rawURL)
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", prefix, err)
	}
	return o, nil
}

func parseURL(rawURL string) (Options, error) {
	var o Options
	u, hosts, redacted, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return o, fmt.Errorf("not a redis:// URL: %v", err)
	}
	q, err := storeurl.NewQuery(u.RawQuery)
	if err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	o.Prefix = q.Take("prefix")
	if v := q.Take("wait_replicas"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, fmt.Errorf("%s: wait_replicas=%s: use a whole number", redacted, v)
		}
		o.WaitReplicas = n
	}
	q.Duration("wait_timeout", &o.WaitTimeout)
	q.Duration("request_timeout", &o.RequestTimeout)
	if err := q.Err(); err != nil {
		return o, fmt.Errorf("%s: %v", redacted, err)
	}
	u.RawQuery = q.Rest().Encode()
	c, err := parseClient(u, hosts)
	o.Client, o.Failover = c.Client, c.Failover
	return o, err
}

// ParseClientURL reads a URL of the forms ParseURL takes, without the store keys.
// The query keys of redis:// URLs are go-redis's (redis.ParseURL: dial_timeout,
// read_timeout, max_retries, pool_size, ...); Sentinel URLs take go-redis's
// failover keys (redis.ParseFailoverURL) except those the URL itself gives
// (master_name, addr, db, username, password), plus sentinel_username and
// sentinel_password for sentinels that require a password of their own. Unknown
// keys are refused. The client has ContextTimeoutEnabled set.
func ParseClientURL(rawURL string) (Config, error) {
	u, hosts, _, err := storeurl.ParseWithHosts(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("not a redis:// URL: %v", err)
	}
	return parseClient(u, hosts)
}

func parseClient(u *url.URL, hosts storeurl.HostList) (Config, error) {
	c := Config{Redacted: storeurl.Redact(hosts.Restore(u.String()))}
	switch strings.ToLower(u.Scheme) {
	case "redis", "rediss":
		if len(hosts) > 1 {
			return Config{}, fmt.Errorf("%s: a redis:// URL names one server; for Sentinel write redis+sentinel://host:26379,host:26379/master", c.Redacted)
		}
		v := *u
		v.Host = hosts.String()
		ropts, err := redis.ParseURL(v.String())
		if err != nil {
			return Config{}, fmt.Errorf("%s: %s", c.Redacted, strings.ReplaceAll(err.Error(), v.String(), c.Redacted))
		}
		ropts.ContextTimeoutEnabled = true
		c.Client = ropts
	case "redis+sentinel", "rediss+sentinel":
		f, err := parseSentinel(u, hosts)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %v", c.Redacted, err)
		}
		c.Failover = f
	default:
		return Config{}, fmt.Errorf("%s: the scheme must be redis, rediss, redis+sentinel or rediss+sentinel", c.Redacted)
	}
	return c, nil
}

// parseSentinel reads redis+sentinel://[[user]:password@]h:26379[,h:26379...]/master[/db][?...].
func parseSentinel(u *url.URL, hosts storeurl.HostList) (*redis.FailoverOptions, error) {
	if len(hosts) == 0 {
		return nil, errors.New("name the sentinels: redis+sentinel://host:26379[,host:26379...]/master")
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if parts[0] == "" || len(parts) > 2 {
		return nil, errors.New("the path must be /master or /master/db: redis+sentinel://host:26379/mymaster/0")
	}
	master, db := parts[0], 0
	if len(parts) == 2 {
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("database %q must be a whole number", parts[1])
		}
		db = n
	}
	q := u.Query()
	for _, k := range []string{"master_name", "addr", "db", "username", "password"} {
		if q.Has(k) {
			return nil, fmt.Errorf("option %s: the URL itself gives it (redis+sentinel://[user:password@]sentinels/master/db)", k)
		}
	}
	sentUser, sentPass := q.Get("sentinel_username"), q.Get("sentinel_password")
	q.Del("sentinel_username")
	q.Del("sentinel_password")
	addrs := hosts.Addrs("26379")
	q.Set("master_name", master)
	for _, a := range addrs[1:] {
		q.Add("addr", a)
	}
	scheme := "redis"
	if strings.HasPrefix(strings.ToLower(u.Scheme), "rediss") {
		scheme = "rediss"
	}
	v := url.URL{Scheme: scheme, Host: addrs[0], Path: "/" + strconv.Itoa(db), RawQuery: q.Encode()}
	f, err := redis.ParseFailoverURL(v.String())
	if err != nil {
		return nil, err
	}
	f.SentinelUsername, f.SentinelPassword = sentUser, sentPass
	if u.User != nil {
		f.Username = u.User.Username()
		f.Password, _ = u.User.Password()
	}
	f.ContextTimeoutEnabled = true
	// go-redis dials in the background, off the caller's context: each dial holds
	// a slot of the pool for up to DialerRetries attempts of DialTimeout each (5 and
	// 5 s by default), and a failover client's dial first asks a sentinel for the
	// primary. After an outage of a minute, dials stuck on sentinels that do not
	// answer yet kept every slot busy for about 45 s, and the store's calls waited
	// behind them. One attempt of at most 2 s frees a slot within 2 s of the
	// outage's end, and still reaches a primary across a link of 400 ms each way
	// (the sentinel's answer, then the dial); a dial_timeout in the URL still wins.
	if !q.Has("dial_timeout") {
		f.DialTimeout = 2 * time.Second
	}
	f.DialerRetries = 1
	return f, nil
}

// Check validates s for client and fills in the defaults: defaultPrefix for an
// empty Prefix, 1s for a zero WaitTimeout.
func Check(client redis.UniversalClient, s Settings, defaultPrefix string) (Settings, error) {
	if s.Prefix == "" {
		s.Prefix = defaultPrefix
	}
	if strings.ContainsAny(s.Prefix, "{}") {
		return s, fmt.Errorf("prefix %q must not contain { or }", s.Prefix)
	}
	if s.WaitReplicas < 0 || s.WaitTimeout < 0 {
		return s, fmt.Errorf("WaitReplicas %d and WaitTimeout %v must not be negative", s.WaitReplicas, s.WaitTimeout)
	}
	if s.WaitTimeout == 0 {
		s.WaitTimeout = time.Second
	}
	if s.WaitReplicas > 0 {
		switch client.(type) {
		case *redis.Client, *redis.ClusterClient:
		default:
			return s, fmt.Errorf("WaitReplicas needs a *redis.Client or *redis.ClusterClient, not %T", client)
		}
	}
	return s, nil
}

// Connect checks that client, made from c, answers and loads scripts into it,
// within c's dial timeout or ctx's deadline, whichever comes first.
func Connect(ctx context.Context, client redis.UniversalClient, c Config, scripts ...*redis.Script) (err error) {
	ctx, end := c.Call(Settings{}).Dial(ctx, c.DialTimeout())
	defer end(&err)
	if err := client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis store %s: %w", c.Redacted, err)
	}
	for _, sc := range scripts {
		if err := sc.Load(ctx, client).Err(); err != nil {
			return fmt.Errorf("loading scripts into %s: %w", c.Redacted, err)
		}
	}
	return nil
}

// ErrNotReplicated is matched (with errors.Is) by the error of a write that fewer
// replicas than asked acknowledged within the WAIT timeout. The write was made on
// the primary.
var ErrNotReplicated = errors.New("redis: too few replicas acknowledged the write")

// NotReplicatedError reports a write that fewer replicas than asked acknowledged
// within the WAIT timeout; the stores export it under the same name. The write was
// made on the primary. It matches ErrNotReplicated.
type NotReplicatedError struct {
	Got  int64 // replicas that acknowledged the write in time
	Want int64 // replicas asked for (Options.WaitReplicas)
}

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("%d of %d replicas acknowledged the write in time", e.Got, e.Want)
}

// Is makes errors.Is(err, ErrNotReplicated) true.
func (e *NotReplicatedError) Is(target error) bool { return target == ErrNotReplicated }

// Eval runs a script whose keys all live in keys[0]'s slot. With s.WaitReplicas
// above zero, it runs it on one connection to the primary of that slot and then
// sends WAIT on that connection when wrote reports that the script wrote; a non-nil
// result can then come with a *NotReplicatedError or a WAIT error.
func Eval(ctx context.Context, client redis.UniversalClient, s Settings, sc *redis.Script, keys []string, args []any, wrote func(any) bool) (any, error) {
	if s.WaitReplicas == 0 {
		return sc.Run(ctx, client, keys, args...).Result()
	}
	var conn *redis.Conn
	switch c := client.(type) {
	case *redis.Client:
		conn = c.Conn()
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		conn = m.Conn()
	default:
		return nil, fmt.Errorf("WaitReplicas needs a *redis.Client or *redis.ClusterClient, not %T", client)
	}
	defer conn.Close()
	res, err := sc.Run(ctx, conn, keys, args...).Result()
	if err != nil || !wrote(res) {
		return res, err
	}
	n, err := conn.Wait(ctx, s.WaitReplicas, s.WaitTimeout).Result()
	if err != nil {
		return res, fmt.Errorf("waiting for replicas: %w", err)
	}
	if n < int64(s.WaitReplicas) {
		return res, &NotReplicatedError{n, int64(s.WaitReplicas)}
	}
	return res, nil
}

// Logger adapts a *slog.Logger to go-redis's logger interface, for
// redis.SetLogger. Each go-redis message becomes one record at level, with the
// attribute component=go-redis.
//
// go-redis has one logger for the whole process, so only a program's main may set
// it: a library package that did would change the logging of every other Redis
// client in its user's process.
func Logger(l *slog.Logger, level slog.Level) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return slogPrintf{l, level}
}

type slogPrintf struct {
	l     *slog.Logger
	level slog.Level
}

func (p slogPrintf) Printf(ctx context.Context, format string, v ...any) {
	if p.l.Enabled(ctx, p.level) {
		p.l.Log(ctx, p.level, strings.TrimSpace(fmt.Sprintf(format, v...)), "component", "go-redis")
	}
}
