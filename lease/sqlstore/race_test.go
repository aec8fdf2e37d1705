package sqlstore

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// countingConnector counts the statements its connections run.
type countingConnector struct {
	driver.Connector
	n *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{conn, c.n}, nil
}

type countingConn struct {
	driver.Conn
	n *atomic.Int64
}

func (c countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.n.Add(1)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.n.Add(1)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c countingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c countingConn) CheckNamedValue(v *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

// TestRacingAcquirersSpread: acquirers of one scope that start together cost a few
// statements each, not a lost race, a read and a backoff per winner ahead of them.
func TestRacingAcquirersSpread(t *testing.T) {
	for _, e := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"Postgres", func(t *testing.T) string { return testenv.Postgres.URL(t) }},
		{"MySQL", func(t *testing.T) string { return testenv.MySQL.URL(t) }},
	} {
		t.Run(e.name, func(t *testing.T) {
			o, err := ParseURL(e.url(t))
			if err != nil {
				t.Fatal(err)
			}
			var n atomic.Int64
			o.Connector, o.Table = countingConnector{o.Connector, &n}, testTable
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			scope := leasetest.Scope(t)
			const racers = 32
			ls := make([]lease.Lease, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			before := n.Load()
			for i := range racers {
				wg.Go(func() {
					<-start
					l, err := s.Acquire(ctx, scope, 1<<16, fmt.Sprintf("racer-%d", i), time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					ls[i] = l
				})
			}
			close(start)
			wg.Wait()
			stmts := n.Load() - before
			seen := map[int64]bool{}
			for _, l := range ls {
				if l.Token == "" {
					continue
				}
				if seen[l.Value] {
					t.Errorf("value %d given twice", l.Value)
				}
				seen[l.Value] = true
			}
			t.Logf("%d racing acquirers: %d statements", racers, stmts)
			if stmts > 10*racers {
				t.Errorf("%d racing acquirers ran %d statements; want at most 10 each", racers, stmts)
			}
			for _, l := range ls {
				s.Release(ctx, l, 1)
			}
		})
	}
}
