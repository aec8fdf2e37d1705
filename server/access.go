package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/server/config"
)

// The access model (docs/security.md): an anonymous caller gets /healthz, the
// dashboard's static files and whatever namespaces without tokens serve; a
// namespace's token opens that namespace (its IDs, decode and state); an admin
// token opens the operators' views (/metrics, /readyz's reasons, every
// namespace's state including store addresses) but issues no IDs. A server with
// no token at all is open to everyone, as before.

// authResult is what a request's Authorization header proved.
type authResult uint8

const (
	authOK      authResult = iota // a token of the set, or the set needs none
	authMissing                   // no Authorization header
	authWrong                     // a header, but not one of the set's tokens
)

// tokenSet holds the SHA-256 of each accepted token, so a configuration may give
// hashes instead of secrets and every comparison is over 32 bytes whatever the
// length of what the caller sent.
type tokenSet struct {
	hashes  [][32]byte
	buckets []*bucket // per token, nil without a rate limit
}

// newTokenSet hashes tokens (a sha256:<hex> entry is the hash itself); the limiter
// gives each distinct token its bucket, shared by every set that accepts it.
func newTokenSet(tokens []string, lim *limiter) *tokenSet {
	ts := &tokenSet{}
	for _, t := range tokens {
		var h [32]byte
		if hx, ok := strings.CutPrefix(t, config.TokenHashPrefix); ok {
			hex.Decode(h[:], []byte(hx)) // checked by config
		} else {
			h = sha256.Sum256([]byte(t))
		}
		ts.hashes = append(ts.hashes, h)
		ts.buckets = append(ts.buckets, lim.bucket(h))
	}
	return ts
}

func (ts *tokenSet) empty() bool { return ts == nil || len(ts.hashes) == 0 }

// check reports what header proves against the set, and the matched token's
// bucket (nil without a rate limit). Every token of the set is compared, in
// constant time, whether or not an earlier one matched.
func (ts *tokenSet) check(header string) (authResult, *bucket) {
	if ts.empty() {
		return authOK, nil
	}
	if header == "" {
		return authMissing, nil
	}
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(header, "bearer ")
	}
	if !ok {
		return authWrong, nil
	}
	h := sha256.Sum256([]byte(tok))
	match := -1
	for i := range ts.hashes {
		eq := subtle.ConstantTimeCompare(h[:], ts.hashes[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return authWrong, nil
	}
	return authOK, ts.buckets[match]
}

// limiter makes the per-token buckets of limits.token_rate.
type limiter struct {
	rate, burst float64
	byHash      map[[32]byte]*bucket
}

func newLimiter(l config.Limits) *limiter {
	if l.TokenRate <= 0 {
		return nil
	}
	burst := float64(l.TokenBurst)
	if burst == 0 {
		burst = max(1, math.Ceil(l.TokenRate))
	}
	return &limiter{rate: l.TokenRate, burst: burst, byHash: map[[32]byte]*bucket{}}
}

func (l *limiter) bucket(h [32]byte) *bucket {
	if l == nil {
		return nil
	}
	b := l.byHash[h]
	if b == nil {
		b = &bucket{rate: l.rate, burst: l.burst, tokens: l.burst}
		l.byHash[h] = b
	}
	return b
}

// bucket is a token bucket: rate requests per second, at most burst at once.
type bucket struct {
	rate, burst float64
	mu          sync.Mutex
	tokens      float64
	last        time.Time
}

// take spends one request; when none is left it returns how long until one is.
func (b *bucket) take(now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}

// budget is the server-wide count of IDs held by requests in flight
// (limits.max_ids_in_flight): what bounds the server's memory.
type budget struct {
	max  int64
	used atomic.Int64
}

// take holds n IDs of the budget, or reports that they do not fit now.
func (b *budget) take(n int) bool { return b.takeBelow(n, b.max) }

// takeRPC holds n IDs for an RPC answer. RPCs together may hold at most three
// quarters of the budget, so that a few large ones cannot refuse every streamed
// request and every single ID.
func (b *budget) takeRPC(n int) bool { return b.takeBelow(n, b.max/4*3) }

// rpcMax is the largest count one RPC may ask for: a quarter of the budget.
func (b *budget) rpcMax() int64 { return b.max / 4 }

func (b *budget) takeBelow(n int, limit int64) bool {
	if b.used.Add(int64(n)) > limit {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

func (b *budget) give(n int) { b.used.Add(-int64(n)) }

// authorize checks a request for ns's IDs or decode: nil, or the 401 of a missing
// or wrong token, or the 429 of a token over its rate.
func (s *Server) authorize(ns *namespace, header string) *apiError {
	if ns.tokens.empty() {
		return nil
	}
	return s.authorizeAs(ns, "namespace "+ns.name, header)
}

// authorizeAs is authorize with what naming the namespace in a 401.
func (s *Server) authorizeAs(ns *namespace, what, header string) *apiError {
	if ns.tokens.empty() {
		return nil
	}
	res, b := ns.tokens.check(header)
	if res != authOK {
		return errToken(what, res)
	}
	return s.spend(b)
}

// authorizeAdmin checks a request for an operators' view (/metrics, /readyz's
// reasons) against the admin tokens.
func (s *Server) authorizeAdmin(header string) *apiError {
	if s.admin.empty() {
		// No admin token is configured: nobody gets these views on a server
		// with tokens, whatever they send.
		return errToken("this route (the admin token, access.admin_tokens)", authMissing)
	}
	res, b := s.admin.check(header)
	if res != authOK {
		return errToken("this route (the admin token, access.admin_tokens)", res)
	}
	return s.spend(b)
}

// isAdmin reports whether header carries an admin token.
func (s *Server) isAdmin(header string) bool {
	if s.admin.empty() {
		return false
	}
	res, _ := s.admin.check(header)
	return res == authOK
}

// spend takes one request from a token's bucket (nil: no rate limit).
func (s *Server) spend(b *bucket) *apiError {
	if b == nil {
		return nil
	}
	if ok, wait := b.take(time.Now()); !ok {
		return errRate(wait)
	}
	return nil
}
