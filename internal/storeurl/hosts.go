package storeurl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Placeholder stands for a URL's host list in the URL CutHosts returns.
const Placeholder = "flurry-hosts.invalid"

// A HostList is the comma-separated host list of a URL's authority, as written:
// "h1:2379,h2:2379", "[::1]:5432,db2". Go's url.Parse refuses some lists that
// libpq, etcd and redis-py accept (one whose first host is an IPv6 literal), so the
// parsers take the list out first, parse the rest, and check each host here.
type HostList []string

// CutHosts takes the host list out of rawURL (scheme://[userinfo@]hosts[/path]...)
// and returns rawURL with Placeholder in its place. A URL without "://" or without
// hosts is returned as it is, with no hosts. Each host must be host, host:port,
// [ipv6] or [ipv6]:port, with a port from 1 to 65535 when one is given.
func CutHosts(rawURL string) (string, HostList, error) {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return rawURL, nil, nil
	}
	start := i + 3
	end := len(rawURL)
	if j := strings.IndexAny(rawURL[start:], "/?#"); j >= 0 {
		end = start + j
	}
	if at := strings.LastIndex(rawURL[start:end], "@"); at >= 0 {
		start += at + 1
	}
	if start == end {
		return rawURL, nil, nil
	}
	hosts := HostList(strings.Split(rawURL[start:end], ","))
	for i, h := range hosts {
		if err := checkHost(h); err != nil {
			// The host is not shown: in a mistyped URL it may be part of a password.
			return rawURL, nil, fmt.Errorf("host %d of the URL's host list: %w", i+1, err)
		}
	}
	return rawURL[:start] + Placeholder + rawURL[end:], hosts, nil
}

func checkHost(h string) error {
	if h == "" {
		return errors.New("empty")
	}
	host, port := h, ""
	if strings.HasPrefix(h, "[") {
		j := strings.Index(h, "]")
		if j < 0 {
			return errors.New("an IPv6 address needs its closing ]")
		}
		host = h[1:j]
		if rest := h[j+1:]; rest != "" {
			if rest[0] != ':' {
				return errors.New("only :port may follow ]")
			}
			port = rest[1:]
			if port == "" {
				return errors.New("empty port")
			}
		}
		if !strings.Contains(host, ":") {
			return errors.New("[...] is for IPv6 addresses")
		}
	} else if j := strings.LastIndex(h, ":"); j >= 0 {
		host, port = h[:j], h[j+1:]
		if port == "" {
			return errors.New("empty port")
		}
	}
	if host == "" {
		return errors.New("no host name")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-_:", c)) {
			return fmt.Errorf("%q is not allowed in a host name (write IPv6 addresses in brackets)", c)
		}
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return errors.New("the port must be a number from 1 to 65535")
		}
	}
	return nil
}

// String joins the hosts as they were written.
func (l HostList) String() string { return strings.Join(l, ",") }

// Addrs returns each host as host:port, with defaultPort where none is written.
func (l HostList) Addrs(defaultPort string) []string {
	out := make([]string, len(l))
	for i, h := range l {
		out[i] = h
		if strings.HasPrefix(h, "[") {
			if strings.HasSuffix(h, "]") {
				out[i] = h + ":" + defaultPort
			}
		} else if !strings.Contains(h, ":") {
			out[i] = h + ":" + defaultPort
		}
	}
	return out
}

// Restore puts the host list back into a URL CutHosts made (or its Redacted form).
func (l HostList) Restore(s string) string {
	if len(l) == 0 {
		return s
	}
	return strings.Replace(s, Placeholder, l.String(), 1)
}

// ParseWithHosts is url.Parse for a URL with a host list: it returns the parsed
// URL (its Host is Placeholder when it has hosts), the hosts, and the URL
// redacted for messages (the password, and the value of any query key ending in
// "password", replaced by "xxxxx"). Parse errors never show the password.
func ParseWithHosts(rawURL string) (*url.URL, HostList, string, error) {
	rest, hosts, err := CutHosts(rawURL)
	if err != nil {
		return nil, nil, "(unparsable URL)", err
	}
	u, err := url.Parse(rest)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error repeats the URL, password included
		}
		return nil, nil, "(unparsable URL)", err
	}
	return u, hosts, redactQuery(hosts.Restore(u.Redacted())), nil
}
