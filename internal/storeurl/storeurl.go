// Package storeurl holds what every store URL parser shares: host lists
// (h1:5432,h2:5432), query keys consumed once and refused when unknown, redaction
// of passwords for messages, and finding the registered store opener of a URL's
// scheme for the lease and segment packages that open any of their stores by URL.
package storeurl

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flurryid/flurry/internal/engines"
)

// ParseOpen makes the Opener of a store package from its ParseURL and Open: the
// URL is parsed into the store's Options, which open opens. T must implement S.
func ParseOpen[S, O, T any](parse func(string) (O, error), open func(context.Context, O) (T, error)) func(ctx context.Context, rawURL string) (S, error) {
	return func(ctx context.Context, rawURL string) (S, error) {
		var zero S
		o, err := parse(rawURL)
		if err != nil {
			return zero, err
		}
		t, err := open(ctx, o)
		if err != nil {
			return zero, err // not t: a typed nil in S would not be nil
		}
		return any(t).(S), nil
	}
}

// Lookup returns the plug-in of kind k (engines.LeaseStore or
// engines.SegmentStore) registered for rawURL's scheme (any case), as its front
// door's type O. An unparsable URL or an unknown scheme is an error prefixed with
// what ("lease", "segment") that lists the registered schemes and never shows the
// URL's password; the scheme of an engine family nothing in this program
// registered is an *engines.NotBuiltError that says what to do.
func Lookup[O any](what string, k engines.Kind, rawURL string) (O, error) {
	var zero O
	u, _, _, err := ParseWithHosts(rawURL)
	if err != nil || u.Scheme == "" {
		if fu, ok := FileURL(rawURL); ok && engines.Has(k, "file") {
			return zero, fmt.Errorf("%s: %q is not a store URL; for a directory write %s", what, rawURL, fu)
		}
		return zero, fmt.Errorf("%s: %q is not a store URL; use one of %s", what, Redact(rawURL), strings.Join(engines.Names(k), ", "))
	}
	if open, ok := engines.Lookup[O](k, u.Scheme); ok {
		return open, nil
	}
	if err := engines.Check(k, u.Scheme); err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	// A scheme of a family that has no plug-in of this kind (zk:// for segments).
	for _, other := range []engines.Kind{engines.LeaseStore, engines.SegmentStore} {
		if f, ok := engines.ForName(other, u.Scheme); ok && other != k {
			return zero, fmt.Errorf("%s: %s:// names a %s %s; there is no %s %s: use one of %s",
				what, strings.ToLower(u.Scheme), f.Name, other, f.Name, k, strings.Join(engines.Names(k), ", "))
		}
	}
	return zero, fmt.Errorf("%s: unknown store scheme %q; use one of %s", what, u.Scheme, strings.Join(engines.Names(k), ", "))
}

// FileURL returns the file:// URL of s when s looks like a file system path
// given where a store URL was wanted (/var/lib/flurry, ./ids), for a message that
// says what to write instead.
func FileURL(s string) (string, bool) {
	if s == "" || strings.Contains(s, "://") || !(strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." || s == "..") {
		return "", false
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", false
	}
	return "file://" + filepath.ToSlash(abs), true
}

// Redact returns a URL with its password, and the value of any query key ending
// in "password", replaced by "xxxxx", for messages. A host list (h1:2379,h2:2379)
// is kept. It is the one redaction every store and command uses.
func Redact(rawURL string) string {
	_, _, r, _ := ParseWithHosts(rawURL)
	return r
}
