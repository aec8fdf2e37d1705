package client

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Transport is the protocol the client speaks to the servers.
type Transport uint8

const (
	// HTTP is the Connect protocol (binary Protobuf over HTTP/1.1 POST, keep-alive);
	// it passes any HTTP proxy or load balancer. The zero Transport.
	HTTP Transport = iota
	// GRPC is gRPC: over HTTP/2 with TLS for https:// servers, and over cleartext
	// HTTP/2 (h2c, prior knowledge) for http:// ones.
	GRPC
)

// String returns "http" or "grpc".
func (t Transport) String() string {
	switch t {
	case HTTP:
		return "http"
	case GRPC:
		return "grpc"
	}
	return fmt.Sprintf("Transport(%d)", t)
}

// Defaults of Options.
const (
	// DefaultBatch is the IDs per request when Options.Batch is zero.
	DefaultBatch = 1000
	// DefaultTimeout bounds a request to one server when Options.Timeout is zero.
	DefaultTimeout = 2 * time.Second
	// DefaultBackoff is a failed server's first backoff when Options.Backoff is zero.
	DefaultBackoff = 100 * time.Millisecond
	// DefaultMaxBackoff caps the backoff when Options.MaxBackoff is zero.
	DefaultMaxBackoff = 10 * time.Second
	// DefaultHedgeMinDelay is the shortest hedge delay when Options.HedgeMinDelay
	// is zero: ten round trips of a 1,000-ID request on a LAN, and above the few
	// milliseconds a Go process can stall for its garbage collector or a busy
	// scheduler, so that hedges answer a server that is gone, not noise.
	DefaultHedgeMinDelay = 10 * time.Millisecond
	// DefaultHedgeMaxDelay is the longest hedge delay when Options.HedgeMaxDelay is
	// zero, and the delay of a server that has not answered yet: what a dead or cut
	// off server may cost a caller at most.
	DefaultHedgeMaxDelay = 100 * time.Millisecond
)

// Options configures a Client. Only Servers is required; the zero value of every
// other field means its default.
type Options struct {
	// Servers are the base URLs of flurry servers ("http://10.0.0.1:8080"; a bare
	// "host:port" means http://), tried in this order at first. At least one.
	// With Remote, they are the local region's servers.
	Servers []string
	// Remote lists the servers of other regions (docs/multi-region.md), one
	// Region each, in the order to fall back to them. A request goes to a
	// remote region only when every server of Servers has failed (it refused,
	// timed out, or is passed over after failing), and to the second remote
	// region only when the first one's servers have failed too; hedges never
	// cross from one region to another. Once a local server's backoff
	// (Backoff, MaxBackoff) has passed, the next request asks it first again,
	// so the client returns to its region by itself. Nil means one region.
	Remote []Region
	// Transport is HTTP (zero) or GRPC.
	Transport Transport
	// Token is sent as "Authorization: Bearer <Token>" when not empty.
	Token string
	// Tokens overrides Token for the namespaces it names.
	Tokens map[string]string

	// Batch is how many IDs one request asks for. It must not exceed the servers'
	// max_count (100,000 unless configured). Zero means adaptive: DefaultBatch,
	// raised for a namespace whose IDs are used faster to what about 5 ms of use
	// takes at the measured rate, up to 100,000 (less if a server refuses that
	// many), and lowered again when use slows. A namespace used at millions of IDs
	// a second then drops up to 100,000 buffered IDs on Close; set Batch to bound
	// that.
	Batch int
	// LowWater is the number of buffered IDs below which a namespace's buffer is
	// refilled in the background, one refill in flight per namespace. Zero means
	// adaptive: the IDs used at the measured rate during three round trips of a
	// request, at least half a request and at most four; a consumer faster than
	// one request per round trip then keeps requests going back to back. A
	// negative value turns prefetching off (a refill starts only when the buffer
	// is empty, and the caller waits for it).
	LowWater int

	// Timeout bounds each request to one server; past it the server counts as
	// failed and the next is tried. With hedging (see HedgeMinDelay), the next
	// server is usually asked long before. Zero means DefaultTimeout.
	Timeout time.Duration
	// Backoff is how long a failed server is passed over after its first failure;
	// each further failure in a row doubles it, up to MaxBackoff, with random
	// jitter of up to half. A server that answers again is used again at once.
	// Zero means DefaultBackoff and DefaultMaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration

	// HedgeMinDelay and HedgeMaxDelay bound the hedge delay. A request that a
	// server has not answered within its hedge delay is also sent to the next
	// server (a hedge): the first answer is used, the other request is cancelled
	// and whatever IDs it brings are dropped, never handed out. A server's hedge
	// delay is the 95th percentile of its last 64 successful round trips, kept
	// within these bounds; before its first answer it is HedgeMaxDelay. So a
	// server that died, or that a network cut off without a reset, costs a
	// caller HedgeMaxDelay at most instead of Timeout. Zero means
	// DefaultHedgeMinDelay (10ms) and DefaultHedgeMaxDelay (100ms).
	HedgeMinDelay time.Duration
	HedgeMaxDelay time.Duration
	// NoHedge turns hedging off: the next server is then asked only when one
	// fails or Timeout passes without an answer.
	NoHedge bool

	// HTTPClient makes the requests. Nil means a client of the client's own, with
	// keep-alive and, for GRPC, HTTP/2 (h2c for http:// servers). Its Timeout, if
	// any, applies on top of Timeout.
	HTTPClient *http.Client
}

// Region is one remote region's servers, for Options.Remote.
type Region struct {
	// Name names the region in ServerStats and errors, such as "us-east".
	Name string
	// Servers are the region's server URLs, as Options.Servers. At least one.
	Servers []string
}

// ParseServers splits a comma-separated list of server addresses, as a --server
// flag takes it, into normalized base URLs: a bare host:port gets http://, a
// trailing slash is dropped. It refuses an empty list, a scheme other than http or
// https, a missing host, a query, a fragment and user information (send tokens with
// Options.Token, never in a URL).
func ParseServers(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := normalizeServer(part)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("client: no server address in %q; give one such as http://127.0.0.1:8080", s)
	}
	return out, nil
}

// normalizeServer checks one server address and returns its base URL.
func normalizeServer(s string) (string, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return "", fmt.Errorf("client: empty server address; give one such as http://127.0.0.1:8080")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("client: server %q is not a URL (%w); give one such as http://127.0.0.1:8080", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("client: server %q: scheme %q is not http or https", s, u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("client: server %q has no host; give one such as http://127.0.0.1:8080", s)
	case u.User != nil:
		return "", fmt.Errorf("client: server %q holds user information; pass a token with Options.Token (--token) instead", redact(u))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("client: server %q has a query or fragment; give only scheme, host, port and path", s)
	case u.Opaque != "":
		return "", fmt.Errorf("client: server %q is not a URL of the form http://host:port", s)
	}
	if p := u.Port(); p != "" {
		var n int
		for _, c := range p {
			if c < '0' || c > '9' {
				return "", fmt.Errorf("client: server %q: port %q is not a number", s, p)
			}
			n = n*10 + int(c-'0')
			if n > 65535 {
				return "", fmt.Errorf("client: server %q: port %q is above 65535", s, p)
			}
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
