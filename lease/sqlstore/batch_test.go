package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestRenewalsTogether renews many leases of one store at once, so that they meet in
// batches, with renewals of stale tokens and of an expired lease among them: each
// live lease is renewed with its own mark and gets its own row back, and each stale
// one is lost, alone, without touching the row of the live holder.
func TestRenewalsTogether(t *testing.T) {
	for _, e := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"Postgres", func(t *testing.T) string { return testenv.Postgres.URL(t) }},
		{"MySQL", func(t *testing.T) string { return testenv.MySQL.URL(t) }},
	} {
		t.Run(e.name, func(t *testing.T) {
			s := openStore(t, e.url(t))
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			scope := leasetest.Scope(t)
			const holders, rounds = 48, 4
			ls := make([]lease.Lease, holders)
			for i := range ls {
				l, err := s.Acquire(ctx, scope, 1<<16, fmt.Sprintf("holder-%d", i), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				ls[i] = l
			}
			// An expired lease, with its token still in its row.
			gone, err := s.Acquire(ctx, scope, 1<<16, "gone", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, l := range ls {
					s.Release(ctx, l, 1)
				}
				del := "DELETE FROM " + testTable + " WHERE scope = ?"
				if s.Dialect() == Postgres {
					del = sqlconn.Dollars(del)
				}
				s.h.DB.ExecContext(ctx, del, scope)
			}()
			for time.Now().Before(gone.Expires.Add(100 * time.Millisecond)) {
				time.Sleep(100 * time.Millisecond)
			}
			base := time.Now().UnixMilli()
			for round := range rounds {
				var wg sync.WaitGroup
				out := make([]lease.Lease, holders)
				errs := make([]error, holders)
				stale := make([]error, holders)
				var goneErr error
				for i := range ls {
					wg.Go(func() {
						out[i], errs[i] = s.Renew(ctx, ls[i], time.Minute, base+int64(1000*round+i))
					})
					wg.Go(func() {
						st := ls[i]
						st.Token = "stale"
						_, stale[i] = s.Renew(ctx, st, time.Minute, base+1e9)
					})
				}
				wg.Go(func() { _, goneErr = s.Renew(ctx, gone, time.Minute, base+1e9) })
				wg.Wait()
				if !errors.Is(goneErr, lease.ErrLost) {
					t.Errorf("round %d: renewal of an expired lease: %v; want ErrLost", round, goneErr)
				}
				for i := range ls {
					if !errors.Is(stale[i], lease.ErrLost) {
						t.Errorf("round %d: renewal of value %d with a stale token: %v; want ErrLost", round, ls[i].Value, stale[i])
					}
					if errs[i] != nil {
						t.Fatalf("round %d: renewal of value %d: %v", round, ls[i].Value, errs[i])
					}
					want := base + int64(1000*round+i)
					if o := out[i]; o.Value != ls[i].Value || o.Token != ls[i].Token || o.Mark != want || o.Epoch != ls[i].Epoch+1 ||
						o.Owner != ls[i].Owner || o.Expires.Before(time.Now().Add(50*time.Second)) {
						t.Errorf("round %d: renewal of %+v gave %+v; want mark %d, epoch %d", round, ls[i], o, want, ls[i].Epoch+1)
					}
					ls[i] = out[i]
				}
			}
			recs, err := s.List(ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.Value == gone.Value {
					if r.Held || r.Mark != 0 {
						t.Errorf("the expired lease's row %+v; want free with mark 0", r)
					}
					continue
				}
				if !r.Held || r.Mark < base+int64(1000*(rounds-1)) || r.Mark >= base+1e9 {
					t.Errorf("row %+v after the renewals", r)
				}
			}
		})
	}
}
