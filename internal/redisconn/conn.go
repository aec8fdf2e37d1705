package redisconn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/bound"
)

// Conn is a Redis store's client with its checked settings: what New and Open of
// every Redis store make.
type Conn struct {
	Client   redis.UniversalClient
	Settings Settings   // checked, with the defaults filled in
	Call     bound.Call // bounds and names each store call
	owned    bool       // Close closes Client
}

// Kind names a Redis store package for New and Open.
type Kind struct {
	Package       string // starts every error: "lease/redisstore"
	DefaultPrefix string // the key prefix of an empty Options.Prefix
}

// New is a store's New: it checks o's settings for a caller's client, which stays
// the caller's (Close does not close it), and makes the store with newStore.
func New[S any](client redis.UniversalClient, o Options, k Kind, newStore func(*Conn) (S, []*redis.Script)) (S, error) {
	c, err := newConn(client, o.Settings, k.DefaultPrefix)
	if err != nil {
		var zero S
		return zero, fmt.Errorf("%s: %w", k.Package, err)
	}
	s, _ := newStore(c)
	return s, nil
}

func newConn(client redis.UniversalClient, s Settings, defaultPrefix string) (*Conn, error) {
	if client == nil {
		return nil, errors.New("New needs a client")
	}
	s, err := Check(client, s, defaultPrefix)
	if err != nil {
		return nil, err
	}
	return &Conn{Client: client, Settings: s, Call: ClientCall(client, s)}, nil
}

// Open is a store's Open: it makes the client o names (o.Client or o.Failover,
// exactly one, with ContextTimeoutEnabled set), checks the settings, makes the
// store with newStore, checks that the server answers and loads the store's
// scripts, within the client's dial timeout or ctx's deadline, whichever comes
// first. The store's Conn owns the client; on any failure it is closed. The client
// dials through dialer, and a call that gets no answer closes the connections that
// went silent; a client a caller gives New keeps its own settings.
func Open[S any](ctx context.Context, o Options, k Kind, newStore func(*Conn) (S, []*redis.Script)) (S, error) {
	var zero S
	c, err := config(o)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", k.Package, err)
	}
	conns := new(bound.Conns)
	c.dial(conns)
	client := c.NewClient()
	conn, err := newConn(client, o.Settings, k.DefaultPrefix)
	if err == nil {
		conn.owned = true
		conn.Call = c.Call(conn.Settings)
		conn.Call.OnNoAnswer = func(start time.Time) { conns.CloseSilent(start) }
		s, scripts := newStore(conn)
		if err = Connect(ctx, client, c, scripts...); err == nil {
			return s, nil
		}
	}
	client.Close()
	return zero, fmt.Errorf("%s: %w", k.Package, err)
}

// dial makes c's client dial through dialer, tracking its connections in conns.
func (c Config) dial(conns *bound.Conns) {
	if o := c.Client; o != nil {
		next := o.Dialer
		if next == nil {
			next = redis.NewDialer(o) // reads o when it dials: after NewClient filled in the defaults
		}
		o.Dialer = dialer(next, conns)
	}
	if f := c.Failover; f != nil {
		next := f.Dialer
		if next == nil {
			next = failoverDialer(f)
		}
		f.Dialer = dialer(next, conns)
	}
}

// config is the Config of o's client, with ContextTimeoutEnabled set.
func config(o Options) (Config, error) {
	var c Config
	switch {
	case o.Client != nil && o.Failover != nil:
		return c, errors.New("both Options.Client and Options.Failover are set; set one")
	case o.Client != nil:
		opts := *o.Client
		opts.ContextTimeoutEnabled = true
		c.Client = &opts
	case o.Failover != nil:
		opts := *o.Failover
		opts.ContextTimeoutEnabled = true
		c.Failover = &opts
	default:
		return c, errors.New("neither Options.Client nor Options.Failover is set; make the Options with ParseURL")
	}
	c.Redacted = c.name()
	return c, nil
}

// name names the server of c in messages, without a password.
func (c Config) name() string {
	if f := c.Failover; f != nil {
		return "redis+sentinel://" + strings.Join(f.SentinelAddrs, ",") + "/" + f.MasterName + "/" + strconv.Itoa(f.DB)
	}
	scheme := "redis://"
	if c.Client.TLSConfig != nil {
		scheme = "rediss://"
	}
	return scheme + c.Client.Addr + "/" + strconv.Itoa(c.Client.DB)
}

// Eval runs a script on the store's client with its settings; see Eval.
func (c *Conn) Eval(ctx context.Context, sc *redis.Script, keys []string, args []any, wrote func(any) bool) (any, error) {
	return Eval(ctx, c.Client, c.Settings, sc, keys, args, wrote)
}

// Close closes the client OpenConn made; a caller's client stays open.
func (c *Conn) Close() error {
	if c.owned {
		return c.Client.Close()
	}
	return nil
}
