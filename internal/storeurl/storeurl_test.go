package storeurl

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/engines"
)

// opener is the front-door type of the test's plug-ins.
type opener func(context.Context, string) (string, error)

func init() {
	engines.Register(engines.SegmentStore, "mem", opener(func(_ context.Context, u string) (string, error) { return "opened " + u, nil }))
	engines.Register(engines.SegmentStore, "bad", opener(func(context.Context, string) (string, error) { return "", errors.New("bad store") }))
}

func open(ctx context.Context, rawURL string) (string, error) {
	o, err := Lookup[opener]("thing", engines.SegmentStore, rawURL)
	if err != nil {
		return "", err
	}
	return o(ctx, rawURL)
}

func TestLookup(t *testing.T) {
	ctx := context.Background()
	if got, err := open(ctx, "MEM://x"); err != nil || got != "opened MEM://x" {
		t.Fatalf("Lookup of a registered scheme (any case): %q, %v", got, err)
	}
	if _, err := open(ctx, "bad://x"); err == nil || err.Error() != "bad store" {
		t.Fatalf("the opener's error is returned as it is: %v", err)
	}
	_, err := open(ctx, "nope://u:hunter2@h/x")
	if err == nil || !strings.Contains(err.Error(), `thing: unknown store scheme "nope"; use one of bad, mem`) {
		t.Fatalf("unknown scheme: %v", err)
	}
	_, err = open(ctx, "no scheme")
	if err == nil || !strings.Contains(err.Error(), "is not a store URL; use one of bad, mem") {
		t.Fatalf("no scheme: %v", err)
	}
	_, err = open(ctx, "postgres://u:hunter2@h/x")
	if _, ok := errors.AsType[*engines.NotBuiltError](err); !ok || !strings.HasPrefix(err.Error(), "thing: postgres:// needs ") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a flurry scheme nothing registered: %v", err)
	}
	if _, err := Lookup[func()]("thing", engines.SegmentStore, "mem://x"); err == nil {
		t.Fatal("Lookup as another type than the one registered succeeded")
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range []string{"mem://x", "nope://u:secret@h/x", "::", "postgres://u:secret@h:5432/db?x=%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := open(context.Background(), raw)
		if err == nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.User == nil {
			return
		}
		if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), ":"+pw+"@") {
			t.Fatalf("error shows the password of %q: %v", raw, err)
		}
	})
}
