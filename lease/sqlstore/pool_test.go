package sqlstore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestPoolIsCapped: the pool Open makes opens at most MaxConns connections, the
// default when the URL names none, however many calls run at once.
func TestPoolIsCapped(t *testing.T) {
	for _, e := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"Postgres", func(t *testing.T) string { return testenv.Postgres.URL(t) }},
		{"MySQL", func(t *testing.T) string { return testenv.MySQL.URL(t) }},
	} {
		t.Run(e.name, func(t *testing.T) {
			base := e.url(t)
			sep := "?"
			if strings.Contains(base, "?") {
				sep = "&"
			}
			for _, tc := range []struct {
				query string
				want  int
			}{{"", sqlconn.DefaultMaxConns()}, {"max_conns=3", 3}} {
				u := base
				if tc.query != "" {
					u += sep + tc.query
				}
				s := openStore(t, u)
				if got := s.DB().Stats().MaxOpenConnections; got != tc.want {
					t.Errorf("%q: the pool's cap is %d; want %d", tc.query, got, tc.want)
				}
				// Many concurrent calls: each beyond the cap waits for a connection.
				var wg sync.WaitGroup
				for range 100 {
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						defer cancel()
						if _, err := s.List(ctx, "pooltest/none"); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				if st := s.DB().Stats(); st.OpenConnections > tc.want {
					t.Errorf("%q: %d connections open after 100 concurrent calls; the cap is %d", tc.query, st.OpenConnections, tc.want)
				}
				s.Close()
			}
		})
	}
}

func TestParseURLMaxConns(t *testing.T) {
	o, err := ParseURL("postgres://u@h/db?max_conns=-1")
	if err != nil || o.MaxConns != -1 {
		t.Errorf("max_conns=-1: %+v, %v; want no cap (-1)", o.MaxConns, err)
	}
	if o, err := ParseURL("mysql://u@h/db"); err != nil || o.MaxConns != 0 {
		t.Errorf("no max_conns: %d, %v; want 0 (the default)", o.MaxConns, err)
	}
	for _, bad := range []string{"0", "x", "-2", "10001"} {
		if _, err := ParseURL("postgres://u@h/db?max_conns=" + bad); err == nil || !strings.Contains(err.Error(), "max_conns") {
			t.Errorf("max_conns=%s: %v; want an error naming max_conns", bad, err)
		}
	}
}
