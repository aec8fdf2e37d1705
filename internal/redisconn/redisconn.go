// Package redisconn holds what flurry's Redis stores (lease/redisstore and
// segment/redisstore) share: their URL form, the settings every one of them has,
// connecting, and running a script followed by WAIT.
//
// Errors carry no package prefix; the stores add theirs. They never show a password.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Settings are the options every Redis store has; each store's Options has these
// fields, in this order, so that it converts to and from Settings.
type Settings struct {
	// Prefix starts every key, inside the hash tag.
	Prefix string
	// WaitReplicas, when above zero, makes every write wait for that many replicas.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Zero means 1s.
	WaitTimeout time.Duration
}

// ParseURL splits a store URL,
//
//	redis://[user:password@]host:port[/db][?prefix=...&wait_replicas=1&wait_timeout=500ms&...]
//	rediss://...   (TLS)
//
// into the client's options and the store's settings. prefix, wait_replicas and
// wait_timeout replace those fields of s; every other query key goes to
// redis.ParseURL (dial_timeout, max_retries, pool_size, ...), which refuses keys it
// does not know. The client's options have ContextTimeoutEnabled set.
func ParseURL(rawURL string, s Settings) (*redis.Options, Settings, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL, password included
		}
		return nil, s, fmt.Errorf("not a redis:// URL: %v", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, s, fmt.Errorf("%s: the scheme must be redis or rediss", u.Redacted())
	}
	q := u.Query()
	if q.Has("prefix") {
		s.Prefix = q.Get("prefix")
		q.Del("prefix")
	}
	if q.Has("wait_replicas") {
		n, err := strconv.Atoi(q.Get("wait_replicas"))
		if err != nil || n < 0 {
			return nil, s, fmt.Errorf("%s: wait_replicas must be a whole number", u.Redacted())
		}
		s.WaitReplicas = n
		q.Del("wait_replicas")
	}
	if q.Has("wait_timeout") {
		d, err := time.ParseDuration(q.Get("wait_timeout"))
		if err != nil || d < 0 {
			return nil, s, fmt.Errorf("%s: wait_timeout must be a duration such as 500ms", u.Redacted())
		}
		s.WaitTimeout = d
		q.Del("wait_timeout")
	}
	u.RawQuery = q.Encode()
	ropts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, s, fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	ropts.ContextTimeoutEnabled = true
	return ropts, s, nil
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

// Connect checks that client answers and loads scripts into it. rawURL is for
// messages only; they show it without its password.
func Connect(ctx context.Context, client redis.UniversalClient, rawURL string, scripts ...*redis.Script) error {
	if err := client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%s: %w", redact(rawURL), err)
	}
	for _, sc := range scripts {
		if err := sc.Load(ctx, client).Err(); err != nil {
			return fmt.Errorf("loading scripts into %s: %w", redact(rawURL), err)
		}
	}
	return nil
}

func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// ErrNotReplicated is matched (with errors.Is) by the error of a write that fewer
// replicas than asked acknowledged within the WAIT timeout. The write was made on
// the primary.
var ErrNotReplicated = errors.New("redis: too few replicas acknowledged the write")

// NotReplicatedError reports a write that fewer replicas than asked acknowledged.
type NotReplicatedError struct{ Got, Want int64 }

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
