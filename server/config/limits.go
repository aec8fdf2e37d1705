package config

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Defaults of the limits (docs/security.md explains each).
const (
	// DefaultMaxIDsInFlight is the server-wide budget of IDs held by requests
	// being served at once.
	DefaultMaxIDsInFlight = 500_000
	// MinMaxIDsInFlight is the smallest budget accepted: one streamed piece of a
	// large batch must fit.
	MinMaxIDsInFlight = 10_000
	// DefaultReadTimeout bounds reading one whole request, headers and body.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds writing one whole response.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultMaxStreams is the most concurrent HTTP/2 streams per connection.
	DefaultMaxStreams = 100
	// MaxMaxCount is the largest max_count accepted.
	MaxMaxCount = 10_000_000
)

// TokenHashPrefix marks a token given as the hex SHA-256 of the real token, so
// the configuration holds no secret: "sha256:" followed by 64 hex digits
// (printf %s "$TOKEN" | sha256sum).
const TokenHashPrefix = "sha256:"

// Access says who may see what beyond a namespace's own tokens.
type Access struct {
	// AdminTokens are the operators' bearer tokens (or sha256:<hex> hashes):
	// they open /metrics, /readyz with reasons and every namespace's state in
	// Info (and so the dashboard), but issue no IDs.
	AdminTokens []string `yaml:"admin_tokens"`
	// AdminTokenEnv names environment variables that each hold an admin token.
	AdminTokenEnv []string `yaml:"admin_token_env"`
	// PublicReadyz lets anonymous callers read /readyz's status word (ready or
	// not ready, never the reasons) on a server that has tokens, for probes that
	// cannot send a header.
	PublicReadyz bool `yaml:"public_readyz"`

	// ResolvedAdmin is filled by Load: the tokens from AdminTokens and AdminTokenEnv.
	ResolvedAdmin []string `yaml:"-"`
}

// Limits bound what clients can make the server hold.
type Limits struct {
	// MaxIDsInFlight is the server-wide budget of IDs that requests being served
	// hold at once (an RPC holds its whole count, a streamed GET one piece). A
	// request that does not fit is refused with 503 and Retry-After. Zero means
	// DefaultMaxIDsInFlight.
	MaxIDsInFlight int `yaml:"max_ids_in_flight"`
	// ReadTimeout bounds reading a whole request, headers and body, so a body
	// that trickles is cut (a Go duration). Empty means DefaultReadTimeout.
	ReadTimeout Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing a whole response, so a client that does not
	// read cannot hold a request. Empty means DefaultWriteTimeout.
	WriteTimeout Duration `yaml:"write_timeout"`
	// MaxConcurrentStreams is the most HTTP/2 streams (gRPC calls) one
	// connection may have open at once. Zero means DefaultMaxStreams.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// TokenRate, when above zero, is the requests per second each token may make
	// (a token bucket per token); more get 429 with Retry-After.
	TokenRate float64 `yaml:"token_rate"`
	// TokenBurst is the bucket's size. Zero means TokenRate rounded up (at least 1).
	TokenBurst int `yaml:"token_burst"`
}

func (k *checker) maxCount(p []string, n int) {
	if n < 0 || n > MaxMaxCount {
		k.add(p, "%d is out of range: give 1 to 10,000,000 (default %d)", n, DefaultMaxCount)
	}
}

func (k *checker) limits(env func(string) (string, bool)) {
	c := k.c
	c.Access.ResolvedAdmin = k.tokens([]string{"access"}, "admin_tokens", "admin_token_env", c.Access.AdminTokens, c.Access.AdminTokenEnv, env)
	l := c.Limits
	p := []string{"limits"}
	if l.MaxIDsInFlight != 0 && l.MaxIDsInFlight < MinMaxIDsInFlight {
		k.add(append(p, "max_ids_in_flight"), "%d is too small: give at least %d (default %d)", l.MaxIDsInFlight, MinMaxIDsInFlight, DefaultMaxIDsInFlight)
	}
	k.positiveDuration(append(p, "read_timeout"), l.ReadTimeout)
	k.positiveDuration(append(p, "write_timeout"), l.WriteTimeout)
	if l.MaxConcurrentStreams < 0 || l.MaxConcurrentStreams > 10_000 {
		k.add(append(p, "max_concurrent_streams"), "%d is out of range: give 1 to 10000 (default %d)", l.MaxConcurrentStreams, DefaultMaxStreams)
	}
	if l.TokenRate < 0 {
		k.add(append(p, "token_rate"), "%v is negative: give requests per second, or 0 for no limit", l.TokenRate)
	}
	if l.TokenBurst < 0 || l.TokenBurst > 0 && l.TokenRate == 0 {
		k.add(append(p, "token_burst"), "give a positive number, with token_rate")
	}
	if c.TLS.ClientCA != "" && c.TLS.Cert == "" {
		k.add([]string{"tls", "client_ca"}, "client certificates need TLS: give cert and key too")
	}
}

// tokens checks tokens written in the file and named by environment variables,
// and returns them all. A token is at least 16 characters, or a sha256:<hex> hash.
func (k *checker) tokens(p []string, fileKey, envKey string, file, envs []string, env func(string) (string, bool)) []string {
	var out []string
	for i, t := range file {
		if what := checkToken(t); what != "" {
			k.add(append(p, fileKey, strconv.Itoa(i)), "token %d %s", i+1, what)
		}
		out = append(out, t)
	}
	for i, e := range envs {
		v, ok := env(e)
		switch {
		case !ok || v == "":
			k.add(append(p, envKey, strconv.Itoa(i)), "environment variable %s is not set (or empty): set it to the token, or remove it from %s", e, envKey)
		default:
			if what := checkToken(v); what != "" {
				k.add(append(p, envKey, strconv.Itoa(i)), "the token in %s %s", e, what)
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// checkToken says what is wrong with a token, or "".
func checkToken(t string) string {
	if h, ok := strings.CutPrefix(t, TokenHashPrefix); ok {
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
			return "starts with sha256: but is not followed by 64 hex digits (the SHA-256 of the token: printf %s \"$TOKEN\" | sha256sum)"
		}
		return ""
	}
	if len(t) < 16 {
		return "is " + strconv.Itoa(len(t)) + " characters: use at least 16 random characters"
	}
	return ""
}
