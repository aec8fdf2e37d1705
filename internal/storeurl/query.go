package storeurl

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Query consumes a store URL's query keys, go-redis style: each key is taken once
// and deleted, the first error is kept, and Remaining refuses the keys left over,
// so that a misspelt option fails instead of being ignored.
type Query struct {
	v   url.Values
	err error
}

// NewQuery parses a URL's raw query. Its error never shows the query, which may
// hold a password.
func NewQuery(rawQuery string) (*Query, error) {
	v, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("bad query: %v", err)
	}
	return &Query{v: v}, nil
}

// Has reports whether key is given and not taken yet.
func (q *Query) Has(key string) bool { return q.v.Has(key) }

// Take returns key's value and deletes the key; "" when it is absent. A key given
// twice, or with no value, is an error.
func (q *Query) Take(key string) string {
	vs, ok := q.v[key]
	if !ok {
		return ""
	}
	delete(q.v, key)
	if len(vs) != 1 {
		q.fail("key %s is given %d times", key, len(vs))
	}
	if vs[len(vs)-1] == "" {
		q.fail("key %s has no value", key)
	}
	return vs[len(vs)-1]
}

// Duration takes key as a positive duration such as 5s into *d; an absent key
// leaves *d as it is.
func (q *Query) Duration(key string, d *time.Duration) {
	v := q.Take(key)
	if v == "" {
		return
	}
	p, err := time.ParseDuration(v)
	if err != nil || p <= 0 {
		q.fail("%s=%s: use a positive duration such as 5s", key, v)
		return
	}
	*d = p
}

// Fail keeps an error of the caller's, unless one was kept already.
func (q *Query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = fmt.Errorf(format, args...)
	}
}

// Err returns the first error.
func (q *Query) Err() error { return q.err }

// Rest returns the keys not taken, for a parser further down (go-redis's).
func (q *Query) Rest() url.Values { return q.v }

// Remaining returns the first error, or else an error naming the keys left over.
func (q *Query) Remaining() error {
	if q.err != nil || len(q.v) == 0 {
		return q.err
	}
	left := make([]string, 0, len(q.v))
	for k := range q.v {
		left = append(left, k)
	}
	sort.Strings(left)
	return fmt.Errorf("unknown key %s", strings.Join(left, ", "))
}

// redactQuery hides the values of query keys that hold a password
// (sentinel_password=...), which url.URL.Redacted leaves in place.
func redactQuery(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	out := s[:q+1]
	rest := s[q+1:]
	frag := ""
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, frag = rest[:i], rest[i:]
	}
	parts := strings.Split(rest, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		if ok && strings.HasSuffix(strings.ToLower(k), "password") {
			parts[i] = k + "=xxxxx"
		}
	}
	return out + strings.Join(parts, "&") + frag
}
