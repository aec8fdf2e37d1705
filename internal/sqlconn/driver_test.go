package sqlconn

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// writing opens path without flurry's settings (in rollback mode, as a new file or
// one another program made is) and holds its write lock until the returned func is
// called, as another process does while it creates a table in a new file.
func writing(t *testing.T, path string) (commit func()) {
	t.Helper()
	raw, err := sqlite.NewConnector(path)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(raw)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE other (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			t.Error(err)
		}
		conn.Close()
	}
}

// TestOpenWaitsForAWriterOfANewFile opens a SQLite file while another connection
// holds its write lock in rollback mode. SQLite answers the journal_mode=WAL of the
// new connection SQLITE_BUSY at once, not after the busy timeout; the open must
// wait for the writer, within the busy timeout, and fail after it.
func TestOpenWaitsForAWriterOfANewFile(t *testing.T) {
	ctx := context.Background()
	hold := 300 * time.Millisecond // how long the write takes, when it ends
	for _, tc := range []struct {
		busy string
		ok   bool
	}{{"5s", true}, {"50ms", false}} {
		t.Run("busy_timeout="+tc.busy, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			commit := writing(t, path)
			released := make(chan struct{})
			if tc.ok {
				go func() {
					defer close(released)
					time.Sleep(hold) // the other process's write takes this long
					commit()
				}()
			} else {
				close(released)
				defer commit() // after the open gave up
			}
			defer func() { <-released }()
			c, err := Parse("sqlite://"+path+"?busy_timeout="+tc.busy, ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			db := sql.OpenDB(c.Connector)
			defer db.Close()
			err = db.PingContext(ctx)
			switch {
			case tc.ok && err != nil:
				t.Fatalf("opening a file another connection writes, busy_timeout %s: %v", tc.busy, err)
			case !tc.ok && (err == nil || !Transient(err)):
				t.Fatalf("opening a file written throughout, busy_timeout %s: %v; want the busy error", tc.busy, err)
			}
		})
	}
}
