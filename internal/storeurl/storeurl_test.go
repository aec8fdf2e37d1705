package storeurl

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func openers() map[string]Opener[string] {
	return map[string]Opener[string]{
		"mem": func(_ context.Context, u string) (string, error) { return "opened " + u, nil },
		"bad": func(context.Context, string) (string, error) { return "", errors.New("bad store") },
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	if got, err := Open(ctx, "thing", "MEM://x", openers()); err != nil || got != "opened MEM://x" {
		t.Fatalf("Open of a known scheme (any case): %q, %v", got, err)
	}
	if _, err := Open(ctx, "thing", "bad://x", openers()); err == nil || err.Error() != "bad store" {
		t.Fatalf("the opener's error is returned as it is: %v", err)
	}
	_, err := Open(ctx, "thing", "nope://u:hunter2@h/x", openers())
	if err == nil || !strings.Contains(err.Error(), `thing: unknown store scheme "nope"; use one of bad, mem`) {
		t.Fatalf("unknown scheme: %v", err)
	}
	_, err = Open(ctx, "thing", "no scheme", openers())
	if err == nil || !strings.Contains(err.Error(), "is not a store URL; use one of bad, mem") {
		t.Fatalf("no scheme: %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range []string{"mem://x", "nope://u:secret@h/x", "::", "postgres://u:secret@h:5432/db?x=%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := Open(context.Background(), "thing", raw, openers())
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
