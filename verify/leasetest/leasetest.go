// Package leasetest is the conformance suite for lease.Store implementations. Every
// store package runs it against its real engine:
//
//	func TestConformance(t *testing.T) {
//		leasetest.Run(t, func(t *testing.T) lease.Store { return openStore(t) })
//	}
//
// newStore must return a new store, with its own connection, on the same backend each
// time it is called, so that concurrent acquirers behave like separate processes. The
// suite uses fresh scopes named after the test and a random suffix, so it can run
// against a database that keeps data between runs.
package leasetest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/conformance"
)

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) lease.Store) {
	t.Run("AcquireFresh", func(t *testing.T) { testAcquireFresh(t, newStore) })
	t.Run("RacingAcquirers", func(t *testing.T) { testRacing(t, newStore) })
	t.Run("RenewRaisesMark", func(t *testing.T) { testRenew(t, newStore) })
	t.Run("StaleToken", func(t *testing.T) { testStaleToken(t, newStore) })
	t.Run("ReleaseFreesAtOnce", func(t *testing.T) { testRelease(t, newStore) })
	t.Run("ExpiryHandsOver", func(t *testing.T) { testExpiry(t, newStore) })
	t.Run("PrefersLowestMark", func(t *testing.T) { testPreference(t, newStore) })
	t.Run("ScopesAreSeparate", func(t *testing.T) { testScopes(t, newStore) })
	t.Run("BadArguments", func(t *testing.T) { testBadArgs(t, newStore) })
	t.Run("AcquireValue", func(t *testing.T) { testAcquireValue(t, newStore) })
	t.Run("Pin", func(t *testing.T) { testPin(t, newStore) })
	t.Run("TakeoverRetiresToken", func(t *testing.T) { testTakeover(t, newStore) })
	t.Run("RacingTakeovers", func(t *testing.T) { testRacingTakeovers(t, newStore) })
	t.Run("TakeoverOfLostLease", func(t *testing.T) { testTakeoverLost(t, newStore) })
	t.Run("EpochCountsWrites", func(t *testing.T) { testEpoch(t, newStore) })
	t.Run("TakeoverDuringRenewals", func(t *testing.T) { testTakeoverDuringRenewals(t, newStore) })
	t.Run("ScopeMarkAgreesWithList", func(t *testing.T) { testScopeMark(t, newStore) })
}

// Scope returns a fresh scope name for a test.
func Scope(t testing.TB) string {
	name := t.Name()
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	out := []byte("leasetest/")
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	return string(out) + "/" + conformance.Suffix()
}

const ttl = 2 * time.Second

func ctx(t *testing.T) context.Context { return conformance.Context(t, 30*time.Second) }

func open(t *testing.T, newStore func(t *testing.T) lease.Store) lease.Store {
	return conformance.Open(t, newStore)
}

func acquire(t *testing.T, s lease.Store, scope string, size int64, owner string) lease.Lease {
	t.Helper()
	l, err := s.Acquire(ctx(t), scope, size, owner, ttl)
	if err != nil {
		t.Fatalf("Acquire(%s, %d): %v", scope, size, err)
	}
	return l
}

func testAcquireFresh(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	before := time.Now()
	l := acquire(t, s, scope, 4, "owner-a")
	if l.Scope != scope || l.Value < 0 || l.Value >= 4 || l.Owner != "owner-a" || l.Token == "" || l.Mark != 0 {
		t.Fatalf("fresh lease %+v", l)
	}
	if l.Value != 0 {
		t.Errorf("fresh pool gave value %d; the lowest mark, then the lowest value, is 0", l.Value)
	}
	if l.Expires.Before(before.Add(ttl-time.Second)) || l.Expires.After(before.Add(ttl+5*time.Second)) {
		t.Errorf("expiry %v not about %v after %v", l.Expires, ttl, before)
	}
	recs, err := s.List(ctx(t), scope)
	if err != nil || len(recs) != 1 || recs[0].Value != l.Value || !recs[0].Held || recs[0].Owner != "owner-a" || recs[0].Token != l.Token {
		t.Errorf("List = %+v, %v", recs, err)
	}
}

func testRacing(t *testing.T, newStore func(t *testing.T) lease.Store) {
	scope := Scope(t)
	const acquirers, size = 16, 8
	stores := make([]lease.Store, acquirers)
	for i := range stores {
		stores[i] = open(t, newStore)
	}
	var (
		mu     sync.Mutex
		won    = map[int64]string{}
		full   int
		others []error
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			owner := fmt.Sprintf("racer-%d", i)
			// A long TTL: this case is about atomicity, and under a loaded machine a
			// 2 s lease can expire between two racers' claims, which is a correct
			// second grant but reads as a double one here.
			l, err := s.Acquire(ctx(t), scope, size, owner, time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, lease.ErrNoFreeValue):
				full++
			case err != nil:
				others = append(others, err)
			default:
				if prev, dup := won[l.Value]; dup {
					t.Errorf("value %d given to %s and %s", l.Value, prev, owner)
				}
				won[l.Value] = owner
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("unexpected errors: %v", others)
	}
	if len(won) != size || full != acquirers-size {
		t.Fatalf("%d winners and %d ErrNoFreeValue; want %d and %d", len(won), full, size, acquirers-size)
	}
	recs, err := stores[0].List(ctx(t), scope)
	if err != nil || len(recs) != size {
		t.Fatalf("List: %d records, %v", len(recs), err)
	}
	for i, r := range recs {
		if r.Value != int64(i) || !r.Held || r.Owner != won[r.Value] {
			t.Errorf("record %+v; owner should be %s", r, won[r.Value])
		}
	}
}

func testRenew(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	l := acquire(t, s, scope, 1, "a")
	mark := time.Now().UnixMilli() + 3000
	l2, err := s.Renew(ctx(t), l, ttl, mark)
	if err != nil || l2.Mark != mark || l2.Token != l.Token || l2.Value != l.Value || l2.Expires.Before(l.Expires) {
		t.Fatalf("Renew = %+v, %v", l2, err)
	}
	l3, err := s.Renew(ctx(t), l2, ttl, mark-1000) // a lower mark never lowers it
	if err != nil || l3.Mark != mark {
		t.Fatalf("Renew with a lower mark = %+v, %v", l3, err)
	}
	recs, _ := s.List(ctx(t), scope)
	if len(recs) != 1 || recs[0].Mark != mark {
		t.Errorf("List after renew %+v", recs)
	}
}

func testStaleToken(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	l := acquire(t, s, scope, 1, "a")
	forged := l
	forged.Token = "not-the-token"
	if _, err := s.Renew(ctx(t), forged, ttl, 5); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew with a stale token: %v", err)
	}
	if err := s.Release(ctx(t), forged, 5); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Release with a stale token: %v", err)
	}
	if _, err := s.Renew(ctx(t), l, ttl, 1); err != nil {
		t.Errorf("the real lease was disturbed: %v", err)
	}
	if _, err := s.Acquire(ctx(t), scope, 1, "b", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Errorf("a held value was given again: %v", err)
	}
}

func testRelease(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	scope := Scope(t)
	l := acquire(t, s, scope, 1, "a")
	reserved := time.Now().UnixMilli() + 4000
	if _, err := s.Renew(ctx(t), l, ttl, reserved); err != nil {
		t.Fatal(err)
	}
	// The holder issued less than it reserved: its release sets the lower mark.
	mark := time.Now().UnixMilli() + 2000
	if err := s.Release(ctx(t), l, mark); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx(t), l, mark); !errors.Is(err, lease.ErrLost) {
		t.Errorf("second Release: %v", err)
	}
	next := acquire(t, s2, scope, 1, "b")
	if next.Value != l.Value || next.Mark != mark || next.Token == l.Token {
		t.Errorf("after release got %+v; want value %d with mark %d and a new token", next, l.Value, mark)
	}
	if _, err := s.Renew(ctx(t), l, ttl, mark); !errors.Is(err, lease.ErrLost) {
		t.Errorf("renew of a released lease: %v", err)
	}
}

func testExpiry(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	scope := Scope(t)
	l, err := s.Acquire(ctx(t), scope, 1, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	mark := time.Now().UnixMilli() + 1500
	if l, err = s.Renew(ctx(t), l, time.Second, mark); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Acquire(ctx(t), scope, 1, "b", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Fatalf("a live lease was taken: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var next lease.Lease
	for {
		next, err = s2.Acquire(ctx(t), scope, 1, "b", ttl)
		if err == nil {
			break
		}
		if !errors.Is(err, lease.ErrNoFreeValue) || time.Now().After(deadline) {
			t.Fatalf("the expired lease was not handed over: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if next.Value != l.Value || next.Mark != mark || next.Owner != "b" {
		t.Errorf("handed over %+v; want value %d with the old mark %d", next, l.Value, mark)
	}
	if _, err := s.Renew(ctx(t), l, ttl, mark+10); !errors.Is(err, lease.ErrLost) {
		t.Errorf("the old holder renewed after losing the value: %v", err)
	}
	if err := s.Release(ctx(t), l, mark+10); !errors.Is(err, lease.ErrLost) {
		t.Errorf("the old holder released the new holder's lease: %v", err)
	}
	recs, _ := s2.List(ctx(t), scope)
	if len(recs) != 1 || recs[0].Owner != "b" || recs[0].Mark != mark {
		t.Errorf("List %+v", recs)
	}
}

func testPreference(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	marks := []int64{3000, 1000, 2000}
	var ls []lease.Lease
	for range marks {
		ls = append(ls, acquire(t, s, scope, 3, "a"))
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Value < ls[j].Value })
	for i, l := range ls {
		if l.Value != int64(i) {
			t.Fatalf("values %+v; want 0, 1, 2 in turn", ls)
		}
		if err := s.Release(ctx(t), l, marks[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int64{1, 2, 0} {
		if got := acquire(t, s, scope, 3, "b"); got.Value != want || got.Mark != marks[want] {
			t.Errorf("got value %d mark %d; want value %d (mark %d), the lowest mark first", got.Value, got.Mark, want, marks[want])
		}
	}
}

func testScopes(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	a, b := Scope(t)+"/dc1", Scope(t)+"/dc2"
	la, lb := acquire(t, s, a, 1, "x"), acquire(t, s, b, 1, "y")
	if la.Value != 0 || lb.Value != 0 {
		t.Errorf("values %d and %d; each scope has its own value 0", la.Value, lb.Value)
	}
	if _, err := s.Acquire(ctx(t), a, 1, "z", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Errorf("scope a: %v", err)
	}
}

// testBadArgs: a store refuses what package leasestore's checks refuse, with an
// error that matches lease.ErrBadConfig (a session stops at once on it, instead of
// retrying), and holds nothing after a refused call.
func testBadArgs(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	refused := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, lease.ErrBadConfig) {
			t.Errorf("%s = %v; want an error matching lease.ErrBadConfig", call, err)
		}
	}
	for _, tc := range []struct {
		scope string
		size  int64
		owner string
		ttl   time.Duration
	}{
		{"", 1, "a", ttl},
		{"bad scope", 1, "a", ttl},
		{strings.Repeat("s", 201), 1, "a", ttl},
		{scope, 0, "a", ttl},
		{scope, 1<<22 + 1, "a", ttl},
		{scope, 1, "", ttl},
		{scope, 1, strings.Repeat("o", 201), ttl},
		{scope, 1, "a", 10 * time.Millisecond},
		{scope, 1, "a", 1500 * time.Microsecond},
		{scope, 1, "a", lease.MaxTTL + time.Millisecond},
	} {
		_, err := s.Acquire(ctx(t), tc.scope, tc.size, tc.owner, tc.ttl)
		refused(fmt.Sprintf("Acquire(%.20q, %d, %.20q, %v)", tc.scope, tc.size, tc.owner, tc.ttl), err)
	}
	for _, v := range []int64{-1, 1 << 22} {
		_, err := s.AcquireValue(ctx(t), scope, v, "a", ttl)
		refused(fmt.Sprintf("AcquireValue(%d)", v), err)
	}
	if recs, err := s.List(ctx(t), scope); err != nil || len(recs) != 0 {
		t.Fatalf("after refused calls List = %+v, %v; want nothing", recs, err)
	}
	l := acquire(t, s, scope, 1, "a")
	_, err := s.Renew(ctx(t), l, 10*time.Millisecond, 1)
	refused("Renew with a ttl of 10ms", err)
	if _, err := s.Renew(ctx(t), l, ttl, 1); err != nil {
		t.Fatalf("Renew after a refused Renew: %v; want the lease still held", err)
	}
}

func testAcquireValue(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	scope := Scope(t)
	fixed, err := s.AcquireValue(ctx(t), scope, 3, "configured", ttl)
	if err != nil || fixed.Value != 3 || fixed.Mark != 0 || fixed.Token == "" || fixed.Owner != "configured" {
		t.Fatalf("AcquireValue(3) = %+v, %v", fixed, err)
	}
	// The pool of 4 skips the configured value.
	var got []int64
	for i := 0; i < 3; i++ {
		got = append(got, acquire(t, s2, scope, 4, "pool").Value)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("pool values %v beside configured value 3; want [0 1 2]", got)
	}
	if _, err := s2.Acquire(ctx(t), scope, 4, "pool", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Errorf("pool took the configured value: %v", err)
	}
	// Nor can a second configured holder, or one that wants a pool holder's value.
	for _, v := range []int64{3, 1} {
		if _, err := s2.AcquireValue(ctx(t), scope, v, "other", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
			t.Errorf("AcquireValue(%d) of a held value: %v", v, err)
		}
	}
	// A value far above every value used so far works too.
	far, err := s2.AcquireValue(ctx(t), scope, 1000, "configured", ttl)
	if err != nil || far.Value != 1000 {
		t.Errorf("AcquireValue(1000) = %+v, %v", far, err)
	}
	// Renew and Release work as for a pool lease; the mark is shared with the pool.
	mark := time.Now().UnixMilli() + 1000
	if _, err := s.Renew(ctx(t), fixed, ttl, mark); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx(t), fixed, mark); err != nil {
		t.Fatal(err)
	}
	if l := acquire(t, s2, scope, 4, "pool"); l.Value != 3 || l.Mark != mark {
		t.Errorf("pool after the configured holder left: %+v; want value 3 with mark %d", l, mark)
	}
	for _, bad := range []int64{-1, 1 << 22} {
		if _, err := s.AcquireValue(ctx(t), scope, bad, "x", ttl); err == nil || errors.Is(err, lease.ErrNoFreeValue) {
			t.Errorf("AcquireValue(%d) = %v; want an argument error", bad, err)
		}
	}
}

// FuzzURL fuzzes a store's URL parser: parsing any string never panics, and an error
// never shows the URL's password (":password@" for a URL that parses, the text between
// ':' and '@' of the authority for one that does not). Seeds should include URLs with
// the password "hunter2pw".
func FuzzURL(f *testing.F, seeds []string, parse func(raw string) error) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := parse(raw)
		if err == nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(err.Error(), ":"+pw+"@") {
				t.Fatalf("error shows the password: %v", err)
			}
		}
		if _, rest, ok := strings.Cut(raw, "://"); perr != nil && ok && strings.Contains(err.Error(), "hunter2pw") {
			authority, _, _ := strings.Cut(rest, "/")
			if strings.Contains(authority, ":hunter2pw@") {
				t.Fatalf("error shows the password: %v", err)
			}
		}
	})
}

// testPin checks lease.Pinner: a pinned lease is held far beyond MaxTTL, by the
// store's own record, and is released like any other.
func testPin(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	p, ok := s.(lease.Pinner)
	if !ok {
		// Optional, as database/sql's upgrades are: flurry sql refuses such a store.
		t.Skipf("%T does not implement lease.Pinner, so flurry sql cannot hold a node value in it", s)
	}
	scope := Scope(t)
	l, err := s.AcquireValue(ctx(t), scope, 2, "database", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Pin(ctx(t), l, lease.MaxPinTTL+time.Millisecond, 0); !errors.Is(err, lease.ErrBadConfig) {
		t.Errorf("Pin past MaxPinTTL: %v; want ErrBadConfig", err)
	}
	mark := time.Now().UnixMilli() + 5000
	pinned, err := p.Pin(ctx(t), l, lease.MaxPinTTL, mark)
	if err != nil {
		t.Fatal(err)
	}
	if pinned.Mark != mark || pinned.Value != 2 || pinned.Token == "" {
		t.Errorf("Pin = %+v; want value 2, mark %d", pinned, mark)
	}
	if least := time.Now().Add(lease.MaxPinTTL - 24*time.Hour); pinned.Expires.Before(least) {
		t.Errorf("pinned lease expires %v; want after %v", pinned.Expires, least)
	}
	recs, err := s2.List(ctx(t), scope)
	if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Expires.Before(time.Now().Add(lease.MaxTTL)) {
		t.Errorf("List after Pin = %+v, %v; want value 2 held for a century", recs, err)
	}
	if _, err := s2.AcquireValue(ctx(t), scope, 2, "other", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Errorf("AcquireValue of a pinned value: %v", err)
	}
	if _, err := p.Pin(ctx(t), lease.Lease{Scope: scope, Value: 2, Token: "stale"}, lease.MaxPinTTL, mark); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Pin with a stale token: %v; want ErrLost", err)
	}
	if err := s.Release(ctx(t), pinned, mark-1000); err != nil {
		t.Fatal(err)
	}
	if l := acquire(t, s2, scope, 3, "pool"); l.Value != 0 {
		t.Errorf("pool after the pin's release took %d; want 0 (never used)", l.Value)
	}
	got, err := s2.AcquireValue(ctx(t), scope, 2, "next", ttl)
	if err != nil || got.Mark != mark-1000 {
		t.Errorf("AcquireValue after release = %+v, %v; want the released mark %d", got, err, mark-1000)
	}
}

// testTakeover: a takeover gives a new token, retires the old one (its Renew and
// Release fail with ErrLost), reports the mark from before it, and raises the mark.
func testTakeover(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	scope := Scope(t)
	l := acquire(t, s, scope, 2, "a")
	reserved := time.Now().UnixMilli() + 4000
	l, err := s.Renew(ctx(t), l, ttl, reserved)
	if err != nil {
		t.Fatal(err)
	}
	mark := reserved + 1000
	n, err := s2.Takeover(ctx(t), lease.Lease{Scope: l.Scope, Value: l.Value, Token: l.Token}, "b", ttl, mark)
	if err != nil {
		t.Fatalf("Takeover of the live lease: %v", err)
	}
	if n.Token == "" || n.Token == l.Token || n.Value != l.Value || n.Scope != scope || n.Owner != "b" {
		t.Fatalf("Takeover = %+v; want a new token for b on value %d", n, l.Value)
	}
	if n.Mark != reserved {
		t.Errorf("Takeover reported mark %d; want the mark before it, %d", n.Mark, reserved)
	}
	if n.Epoch != l.Epoch+1 {
		t.Errorf("Takeover epoch %d; want one more than the renewal's %d", n.Epoch, l.Epoch)
	}
	if !n.Expires.After(time.Now()) {
		t.Errorf("Takeover expiry %v is not in the future", n.Expires)
	}
	if _, err := s.Renew(ctx(t), l, ttl, mark+5); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew with the retired token: %v; want ErrLost", err)
	}
	if err := s.Release(ctx(t), l, 1); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Release with the retired token: %v; want ErrLost", err)
	}
	if _, err := s.Takeover(ctx(t), l, "c", ttl, mark); !errors.Is(err, lease.ErrLost) {
		t.Errorf("second Takeover with the retired token: %v; want ErrLost", err)
	}
	recs, err := s.List(ctx(t), scope)
	if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Token != n.Token || recs[0].Owner != "b" || recs[0].Mark != mark {
		t.Fatalf("List after takeover = %+v, %v; want b's lease with mark %d", recs, err, mark)
	}
	// The new lease works as any other, and its value stays held.
	n2, err := s2.Renew(ctx(t), n, ttl, mark+10)
	if err != nil || n2.Mark != mark+10 || n2.Epoch != n.Epoch+1 {
		t.Fatalf("Renew of the new lease = %+v, %v", n2, err)
	}
	if _, err := s.AcquireValue(ctx(t), scope, l.Value, "d", ttl); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Errorf("AcquireValue of a taken-over value: %v; want ErrNoFreeValue", err)
	}
	if err := s2.Release(ctx(t), n2, mark); err != nil {
		t.Fatalf("Release of the new lease: %v", err)
	}
}

// testRacingTakeovers: processes started from copies of one journal race to take
// its lease over; exactly one wins.
func testRacingTakeovers(t *testing.T, newStore func(t *testing.T) lease.Store) {
	scope := Scope(t)
	const racers = 8
	stores := make([]lease.Store, racers)
	for i := range stores {
		stores[i] = open(t, newStore)
	}
	l, err := stores[0].Acquire(ctx(t), scope, 1, "crashed", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		won    []lease.Lease
		others []error
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			n, err := s.Takeover(ctx(t), l, fmt.Sprintf("copy-%d", i), time.Minute, int64(i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, n)
			case !errors.Is(err, lease.ErrLost):
				others = append(others, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("unexpected errors: %v", others)
	}
	if len(won) != 1 {
		t.Fatalf("%d takeovers of one lease succeeded: %+v; want exactly 1", len(won), won)
	}
	recs, err := stores[0].List(ctx(t), scope)
	if err != nil || len(recs) != 1 || recs[0].Token != won[0].Token {
		t.Fatalf("List = %+v, %v; want the winner's token %s", recs, err, won[0].Token)
	}
}

// testTakeoverLost: a lease that expired, was released, or was taken by another
// holder cannot be taken over, and a refused takeover changes nothing.
func testTakeoverLost(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	l, err := s.Acquire(ctx(t), scope, 1, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	forged := l
	forged.Token = "not-the-token"
	if _, err := s.Takeover(ctx(t), forged, "b", ttl, 7); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Takeover with a wrong token: %v; want ErrLost", err)
	}
	if _, err := s.Renew(ctx(t), l, time.Second, 3); err != nil {
		t.Fatalf("a refused takeover disturbed the lease: %v", err)
	}
	// Wait for the store to see the lease expire, then try.
	deadline := time.Now().Add(15 * time.Second)
	for {
		recs, err := s.List(ctx(t), scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 && !recs[0].Held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease did not expire: %+v", recs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := s.Takeover(ctx(t), l, "b", ttl, 9); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Takeover of an expired lease: %v; want ErrLost", err)
	}
	recs, err := s.List(ctx(t), scope)
	if err != nil || len(recs) != 1 || recs[0].Mark != 3 {
		t.Fatalf("List after refused takeovers = %+v, %v; want mark 3", recs, err)
	}
	next := acquire(t, s, scope, 1, "c")
	if _, err := s.Takeover(ctx(t), l, "b", ttl, 9); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Takeover of a lease another holder acquired since: %v; want ErrLost", err)
	}
	if err := s.Release(ctx(t), next, 3); err != nil {
		t.Fatalf("the next holder's lease was disturbed: %v", err)
	}
	if _, err := s.Takeover(ctx(t), next, "b", ttl, 9); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Takeover of a released lease: %v; want ErrLost", err)
	}
	_, err = s.Takeover(ctx(t), l, "", ttl, 9)
	if !errors.Is(err, lease.ErrBadConfig) {
		t.Errorf("Takeover with no owner: %v; want ErrBadConfig", err)
	}
}

// testEpoch: every write of a value's record counts one more, across release and
// expiry, and List reports it.
func testEpoch(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	scope := Scope(t)
	l := acquire(t, s, scope, 1, "a")
	if l.Epoch < 1 {
		t.Fatalf("first Acquire epoch %d; want at least 1", l.Epoch)
	}
	e := l.Epoch
	l, err := s.Renew(ctx(t), l, ttl, 10)
	if err != nil || l.Epoch != e+1 {
		t.Fatalf("Renew epoch %d (%v); want %d", l.Epoch, err, e+1)
	}
	if err := s.Release(ctx(t), l, 10); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List(ctx(t), scope)
	if err != nil || len(recs) != 1 || recs[0].Epoch != e+1 {
		t.Fatalf("List after release = %+v, %v; want epoch %d kept", recs, err, e+1)
	}
	l2, err := s.AcquireValue(ctx(t), scope, 0, "b", ttl)
	if err != nil || l2.Epoch != e+2 {
		t.Fatalf("AcquireValue after release: epoch %d (%v); want %d: a release must not reset it", l2.Epoch, err, e+2)
	}
	if err := s.Release(ctx(t), l2, 10); err != nil {
		t.Fatal(err)
	}
	l3 := acquire(t, s, scope, 1, "c")
	if l3.Epoch != e+3 {
		t.Errorf("Acquire after release: epoch %d; want %d", l3.Epoch, e+3)
	}
}

// testTakeoverDuringRenewals: a takeover while the old holder renews reports a mark
// at or above every reservation a renewal of the old holder wrote (the renewals
// that succeeded came before it; those after it fail with ErrLost): a store that
// reads the mark, then writes the new holder by the token alone, would report a
// mark older than a renewal that came between. The renewers keep on until the
// takeover ends them: a store whose takeover loses every race to a holder that
// renews without pause (a read, then a write guarded by what it read, retried)
// fails it too.
func testTakeoverDuringRenewals(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s, s2 := open(t, newStore), open(t, newStore)
	scope := Scope(t)
	const rounds, renewers = 10, 3
	// A bound on each renewer, far above what a takeover takes (milliseconds), in
	// case the takeover returns without ending the lease.
	const bound = 30 * time.Second
	for round := range rounds {
		l, err := s.AcquireValue(ctx(t), scope, int64(round), "a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu       sync.Mutex
			reserved int64 // the highest mark a successful renewal returned
			next     = time.Now().UnixMilli()
			errs     []error
			wg       sync.WaitGroup
		)
		stop := time.Now().Add(bound)
		for range renewers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					mu.Lock()
					next++
					m := next
					mu.Unlock()
					got, err := s.Renew(ctx(t), l, time.Minute, m)
					mu.Lock()
					switch {
					case errors.Is(err, lease.ErrLost):
						mu.Unlock()
						return
					case err != nil:
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					reserved = max(reserved, got.Mark)
					mu.Unlock()
				}
				mu.Lock()
				errs = append(errs, fmt.Errorf("the old holder still renewed after %v", bound))
				mu.Unlock()
			})
		}
		time.Sleep(time.Duration(round%4) * 5 * time.Millisecond)
		n, err := s2.Takeover(ctx(t), l, "b", ttl, 1)
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: Takeover during renewals: %v", round, err)
		}
		if len(errs) > 0 {
			t.Fatalf("round %d: renewals failed other than with ErrLost: %v", round, errs)
		}
		if n.Mark < reserved {
			t.Fatalf("round %d: Takeover reported mark %d, below the reservation %d a renewal of the old holder wrote", round, n.Mark, reserved)
		}
		recs, err := s.List(ctx(t), scope)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Value == int64(round) && (r.Token != n.Token || r.Mark < reserved) {
				t.Fatalf("round %d: List = %+v; want %s's lease with a mark of at least %d", round, r, n.Token, reserved)
			}
		}
	}
}

// testScopeMark checks a store's lease.ScopeMarker, if it has one: the mark it
// reads is the one List's records give, the highest mark of the values no live
// lease holds but the one left out: released values and expired leases count,
// live holders' reservations do not.
func testScopeMark(t *testing.T, newStore func(t *testing.T) lease.Store) {
	s := open(t, newStore)
	sm, ok := s.(lease.ScopeMarker)
	if !ok {
		t.Skip("the store has no ScopeMark; sessions list the scope")
	}
	scope := Scope(t)
	fromList := func(skip int64) int64 {
		t.Helper()
		recs, err := s.List(ctx(t), scope)
		if err != nil {
			t.Fatal(err)
		}
		var m int64
		for _, r := range recs {
			if !r.Held && r.Value != skip {
				m = max(m, r.Mark)
			}
		}
		return m
	}
	check := func(what string, skip, want int64) {
		t.Helper()
		got, err := sm.ScopeMark(ctx(t), scope, skip)
		if err != nil {
			t.Fatalf("%s: ScopeMark: %v", what, err)
		}
		if l := fromList(skip); got != want || l != want {
			t.Errorf("%s: ScopeMark(value %d) = %d, List gives %d; want %d", what, skip, got, l, want)
		}
	}
	check("an empty scope", 0, 0)
	base := time.Now().UnixMilli()
	var ls []lease.Lease
	for i := range 4 {
		l := acquire(t, s, scope, 8, fmt.Sprintf("holder-%d", i))
		if l.Value != int64(i) {
			t.Fatalf("value %d; want %d in turn", l.Value, i)
		}
		ls = append(ls, l)
	}
	// Live holders' reservations are left out.
	if _, err := s.Renew(ctx(t), ls[0], ttl, base+90000); err != nil {
		t.Fatal(err)
	}
	check("held values only", 7, 0)
	if err := s.Release(ctx(t), ls[1], base+500); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx(t), ls[2], base+900); err != nil {
		t.Fatal(err)
	}
	check("two released values", 7, base+900)
	check("leaving out the higher", 2, base+500)
	check("leaving out the lower", 1, base+900)
	// A lease that expired counts with the mark its holder reserved.
	l, err := s.Renew(ctx(t), ls[3], time.Second, base+3000)
	if err != nil {
		t.Fatal(err)
	}
	check("a reservation of a live lease", 7, base+900)
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs, err := s.List(ctx(t), scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 4 && !recs[3].Held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the 1 s lease of value %d never expired: %+v", l.Value, recs)
		}
		// Value 0 stays held meanwhile: its reservation must stay left out.
		if ls[0], err = s.Renew(ctx(t), ls[0], ttl, base+90000); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	check("an expired lease", 7, base+3000)
	check("leaving out the expired one", 3, base+900)
}
