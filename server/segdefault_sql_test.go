//go:build flurry_full || flurry_sql

package server

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/filestore"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/segment/sqlstore"
	"github.com/flurryid/flurry/server/config"
)

// TestDefaultSegmentKeepsEarlierSQLite: a data directory made by an earlier flurry
// holds the default segment namespace's counter in segments.db (SQLite). A build
// with SQLite keeps serving from that file, above every ID it issued, says so in one
// log line, and starts no file store beside it. (The lean build's refusal is
// checked on the binary by cmd/flurry's TestLeanBuild.)
func TestDefaultSegmentKeepsEarlierSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := t.TempDir()
	legacy := filepath.Join(data, "segments.db")
	o, err := sqlstore.ParseURL("sqlite://" + legacy)
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqlstore.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	const issued = 123456 // what the earlier flurry handed out
	if err := old.Create(ctx, segment.Tag{Name: config.DefaultSegmentName, Step: 1000, Max: issued}); err != nil {
		t.Fatal(err)
	}
	old.Close()

	var logs bytes.Buffer
	cfg := config.Default()
	cfg.DataDir = data
	s, err := New(ctx, Options{Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	id, err := s.namespaces[config.DefaultSegmentName].ints.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id <= issued {
		t.Fatalf("first ID %d after an earlier flurry issued up to %d in %s", id, issued, legacy)
	}
	// One line says the earlier file is kept; the private-store warning, which
	// names every namespace's store, is not counted.
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, legacy) && !strings.Contains(line, "only this server can use") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d log lines name %s, want one:\n%s", n, legacy, logs.String())
	}
	if has, err := filestore.HasState(filepath.Join(data, "segments")); err != nil || has {
		t.Errorf("a file store was started beside the SQLite file: %v, %v", has, err)
	}
}

// TestDefaultSegmentPrefersFileStore: once the file store has state, it is the
// store, even when a segments.db is also there.
func TestDefaultSegmentPrefersFileStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := t.TempDir()
	fs, err := filestore.New(filepath.Join(data, "segments"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Create(ctx, segment.Tag{Name: config.DefaultSegmentName, Step: 10, Max: 777}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "segments.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = data
	s, err := New(ctx, Options{Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: slog.New(slog.DiscardHandler), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if id, err := s.namespaces[config.DefaultSegmentName].ints.Next(ctx); err != nil || id != 778 {
		t.Fatalf("first ID %d, %v; want 778 from the file store", id, err)
	}
}
