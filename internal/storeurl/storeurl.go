// Package storeurl holds what every store URL parser shares: host lists
// (h1:5432,h2:5432), query keys consumed once and refused when unknown, redaction
// of passwords for messages, and picking a store opener by a URL's scheme for the
// lease and segment packages that open any of their stores by URL.
package storeurl

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/flurryid/flurry/internal/buildtags"
)

// Opener opens one kind of store from its URL.
type Opener[S any] func(ctx context.Context, rawURL string) (S, error)

// ParseOpen makes the Opener of a store package from its ParseURL and Open: the
// URL is parsed into the store's Options, which open opens. T must implement S.
func ParseOpen[S, O, T any](parse func(string) (O, error), open func(context.Context, O) (T, error)) Opener[S] {
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

// Schemes lists the schemes of openers, sorted.
func Schemes[S any](openers map[string]Opener[S]) []string {
	out := make([]string, 0, len(openers))
	for k := range openers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Open runs the opener of rawURL's scheme (case-insensitive). An unparsable URL or
// an unknown scheme is an error prefixed with what ("lease", "segment") that lists
// the known schemes and never shows the URL's password; the scheme of an engine
// family this build leaves out is a *buildtags.NotBuiltError naming the tag.
func Open[S any](ctx context.Context, what, rawURL string, openers map[string]Opener[S]) (S, error) {
	var zero S
	u, _, _, err := ParseWithHosts(rawURL)
	if err != nil || u.Scheme == "" {
		return zero, fmt.Errorf("%s: %q is not a store URL; use one of %s", what, Redact(rawURL), strings.Join(Schemes(openers), ", "))
	}
	open, ok := openers[strings.ToLower(u.Scheme)]
	if !ok {
		if err := buildtags.CheckScheme(u.Scheme); err != nil {
			return zero, fmt.Errorf("%s: %w", what, err)
		}
		return zero, fmt.Errorf("%s: unknown store scheme %q; use one of %s", what, u.Scheme, strings.Join(Schemes(openers), ", "))
	}
	return open(ctx, rawURL)
}

// Redact returns a URL with its password, and the value of any query key ending
// in "password", replaced by "xxxxx", for messages. A host list (h1:2379,h2:2379)
// is kept. It is the one redaction every store and command uses.
func Redact(rawURL string) string {
	_, _, r, _ := ParseWithHosts(rawURL)
	return r
}

// Register makes open the opener of every URL scheme of the engine family named
// family (a buildtags.Family's Name), so that the scheme lists live in one place,
// package buildtags. The tagged files of leaseurl and segmenturl call it.
func Register[S any](m map[string]Opener[S], family string, open Opener[S]) {
	for _, f := range buildtags.Families() {
		if f.Name == family {
			for _, s := range f.Schemes {
				m[s] = open
			}
		}
	}
}
