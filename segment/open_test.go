package segment_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/sqlstore"
)

// TestStartsWithAStoreDown: with PostgreSQL (residue class 0) refusing or hanging
// at the start, OpenStores and New start on SQLite (class 1) alone; PostgreSQL is
// opened in the background once it is back, gets the tag from Prepare, and serves
// when SQLite goes away. Before OpenStores, opening PostgreSQL failed and nothing
// started.
func TestStartsWithAStoreDown(t *testing.T) {
	for _, fault := range []string{"refused", "hanging"} {
		t.Run(fault, func(t *testing.T) {
			raw, proxy := proxied(t)
			if fault == "refused" {
				proxy.Cut()
			} else {
				proxy.Hang()
			}
			liteURL := "sqlite://" + filepath.Join(t.TempDir(), "segments.db")
			var lite *gate
			open := func(ctx context.Context, u string) (segment.Store, error) {
				s, err := storeurl.ParseOpen[*sqlstore.Store](sqlstore.ParseURL, sqlstore.Open)(ctx, u)
				if err != nil || u != liteURL {
					return s, err
				}
				lite = &gate{Store: s}
				return lite, nil
			}
			tag := newTag(t, 20) // named only: Prepare creates it in each store
			prepare := func(ctx context.Context, s segment.Store) error {
				err := s.Create(ctx, segment.Tag{Name: tag, Step: 20})
				if errors.Is(err, segment.ErrTagExists) {
					return nil
				}
				return err
			}
			stores, err := segment.OpenStores(testCtx(t), []string{raw, liteURL}, open,
				segment.OpenOptions{Timeout: time.Second, RetryMax: 200 * time.Millisecond, Prepare: prepare})
			if err != nil {
				t.Fatalf("OpenStores with one store of two down: %v", err)
			}
			t.Cleanup(func() {
				for _, s := range stores {
					s.Close()
				}
			})
			if _, err := stores[0].Tags(testCtx(t)); !errors.Is(err, segment.ErrNotOpen) {
				t.Fatalf("the store that is down: %v, want ErrNotOpen", err)
			}
			a := newAlloc(t, segment.Options{Stores: stores, Tag: tag, MaxStep: 40, FetchTimeout: time.Second, RetryMax: 50 * time.Millisecond})
			var ids []flurry.ID
			take := func(n int, phase string) {
				for i := 0; i < n; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					id, err := a.Next(ctx)
					cancel()
					if err != nil {
						t.Fatalf("%s: Next %d: %v", phase, i, err)
					}
					ids = append(ids, id)
				}
			}
			take(300, "PostgreSQL down")
			if odd := served(t, "PostgreSQL down", ids); odd != len(ids) {
				t.Fatalf("%d of %d IDs odd while only SQLite was open", odd, len(ids))
			}

			proxy.Restore()
			waitFor(t, "PostgreSQL to join", func() bool {
				_, err := stores[0].Tags(testCtx(t))
				return err == nil
			})
			lite.down.Store(true)
			mark := len(ids)
			take(300, "SQLite refusing")
			served(t, "whole run", ids)
			even := 0
			for _, id := range ids[mark:] {
				even += 1 - int(id%2)
			}
			if last := ids[len(ids)-1]; even == 0 || last%2 != 0 {
				t.Fatalf("%d even IDs after SQLite went away, last %d: PostgreSQL did not join", even, last)
			}
			lite.down.Store(false)
		})
	}
}

// TestOpenStoresErrors: nothing starts when no store opens, and the error names each;
// a single store fails as its opener does.
func TestOpenStoresErrors(t *testing.T) {
	refuse := func(_ context.Context, u string) (segment.Store, error) {
		return nil, errors.New("connection refused by " + u)
	}
	_, err := segment.OpenStores(testCtx(t), []string{"a://one", "b://two"}, refuse, segment.OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "none of the 2 stores could be opened") ||
		!strings.Contains(err.Error(), "store 1 of 2 (a://one): connection refused by a://one") ||
		!strings.Contains(err.Error(), "store 2 of 2 (b://two): connection refused by b://two") {
		t.Fatalf("every store down: %v", err)
	}
	_, err = segment.OpenStores(testCtx(t), []string{"a://one"}, refuse, segment.OpenOptions{})
	if err == nil || err.Error() != "connection refused by a://one" {
		t.Fatalf("a single store down: %v, want the opener's error as it is", err)
	}
	if _, err := segment.OpenStores(testCtx(t), nil, refuse, segment.OpenOptions{}); err == nil {
		t.Fatal("no URL: no error")
	}
}
