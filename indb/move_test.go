package indb_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/indb"
)

// TestMoveUnderWay holds a move of the PostgreSQL counter (TestClock's
// flurry.test_move_delay_ms keeps session A in it, with the advisory lock) and
// calls from two sessions whose clocks are one and two ticks past the counter's
// (10-second ticks, so that the clocks stay in their ticks however slowly the
// test runs). The one a tick behind keeps its slot while the move is under way:
// it does not queue for the lock. The one two ticks behind must not take an ID
// that old: it waits for the lock, and once A is cancelled it moves the counter
// to its own clock's tick.
func TestMoveUnderWay(t *testing.T) {
	_, db := freshDB(t, indb.Postgres)
	l := mustLayout(t, "time:30:10s:2024-01-01T00:00:00Z,node:4,seq:10")
	in := install(t, db, indb.InstallOptions{Options: indb.Options{Engine: indb.Postgres, Layout: l, TestClock: true}})
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b, c := conn(), conn(), conn()
	before := next(t, a, indb.DefaultFunction, 2)
	tick := mustTick(t, l, before[1])
	// An offset that puts a session's clock in the middle of tick tick+n.
	mid := func(n int64) int64 {
		return l.Epoch().UnixMilli() + (tick+n)*l.Unit().Milliseconds() + l.Unit().Milliseconds()/2 - time.Now().UnixMilli()
	}
	var pid int
	if err := a.QueryRowContext(ctx(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx(t), "SELECT set_config('flurry.test_move_delay_ms', '60000', false)"); err != nil {
		t.Fatal(err)
	}
	setOffset(t, a, indb.Postgres, mid(1))
	moved := make(chan error, 1)
	go func() {
		var id int64
		moved <- a.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&id)
	}()
	holds := func() bool {
		var held int
		if err := db.QueryRowContext(ctx(t), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1", pid).Scan(&held); err != nil {
			t.Fatal(err)
		}
		return held > 0
	}
	for deadline := time.Now().Add(20 * time.Second); !holds(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("session A never entered its move")
		}
	}

	// B, a tick past the counter: its slot is kept while A moves.
	setOffset(t, b, indb.Postgres, mid(1))
	if _, err := b.ExecContext(ctx(t), "SET statement_timeout = 20000"); err != nil {
		t.Fatal(err)
	}
	kept := next(t, b, indb.DefaultFunction, 3)
	if !holds() {
		t.Fatal("session A's move ended before session B's calls returned: the test shows nothing")
	}
	for _, id := range kept {
		if got := mustTick(t, l, id); got != tick {
			t.Errorf("session B, one tick past the counter during a move, got an ID of tick %d; want the counter's tick %d", got, tick)
		}
	}

	// C, two ticks past the counter: it waits for the lock.
	setOffset(t, c, indb.Postgres, mid(2))
	type result struct {
		id  int64
		err error
	}
	waited := make(chan result, 1)
	go func() {
		var r result
		r.err = c.QueryRowContext(ctx(t), "SELECT "+indb.DefaultFunction+"()").Scan(&r.id)
		waited <- r
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		select {
		case r := <-waited:
			t.Fatalf("session C, two ticks past the counter, returned %d (tick %d), %v while the move was under way; want it to wait for the move", r.id, mustTick(t, l, flurry.ID(r.id)), r.err)
		default:
		}
		var n int
		if err := db.QueryRowContext(ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory' AND pid <> $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session C never waited for the move's lock")
		}
	}
	if _, err := db.ExecContext(ctx(t), "SELECT pg_cancel_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if err := <-moved; err == nil || !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("session A's call, cancelled in its move: %v; want a cancel", err)
	}
	r := <-waited
	if r.err != nil {
		t.Fatalf("session C after the cancelled move: %v", r.err)
	}
	if got := mustTick(t, l, flurry.ID(r.id)); got != tick+2 {
		t.Errorf("session C got an ID of tick %d; want its clock's tick %d", got, tick+2)
	}
	t.Logf("counter's tick %d: B kept %d IDs of it during the move, C moved to tick %d", tick, len(kept), tick+2)
	checkIDs(t, l, in.Node, before, kept, []flurry.ID{flurry.ID(r.id)})
}
