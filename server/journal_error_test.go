package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

// fullDisk is a lease journal whose writes fail with ENOSPC once full is set.
type fullDisk struct {
	mu   sync.Mutex
	e    lease.JournalEntry
	full bool
}

func (j *fullDisk) Load(context.Context) (lease.JournalEntry, error) {
	return lease.JournalEntry{}, nil
}

func (j *fullDisk) Save(_ context.Context, e lease.JournalEntry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.full {
		return &os.PathError{Op: "write", Path: "/var/lib/flurry/journal/ids.json.tmp", Err: syscall.ENOSPC}
	}
	j.e = e
	return nil
}

// A namespace whose lease journal cannot be written (a full disk) answers 503
// (gRPC Unavailable) with the cause and what to do, not "retry shortly"; the
// journal's path stays in the server's log.
func TestIssueErrorNamesFullJournal(t *testing.T) {
	j := &fullDisk{}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Namespace: t.Name()},
		lease.Options{Store: memstore.New(nil), Journal: j, Logger: quiet, Budget: time.Second, Window: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	j.mu.Lock()
	j.full = true
	j.mu.Unlock()
	var refusal error
	for end := time.Now().Add(5 * time.Second); refusal == nil && time.Now().Before(end); time.Sleep(time.Millisecond) {
		_, refusal = g.Next(context.Background())
	}
	if !errors.Is(refusal, lease.ErrJournal) {
		t.Fatalf("refusal %v; want lease.ErrJournal", refusal)
	}
	srv := &Server{log: quiet}
	e := srv.issueError(&namespace{name: "ids"}, refusal)
	if e.status != 503 || e.code != connect.CodeUnavailable {
		t.Fatalf("status %d, code %v; want 503 Unavailable", e.status, e.code)
	}
	for _, want := range []string{"namespace ids", "flurry cannot write its lease journal (no space left on device)", "free disk space"} {
		if !strings.Contains(e.msg, want) {
			t.Fatalf("message %q does not say %q", e.msg, want)
		}
	}
	if strings.Contains(e.msg, "/var/lib") || strings.Contains(e.msg, "retry shortly") {
		t.Fatalf("message %q: the journal's path, or retry shortly", e.msg)
	}
}
