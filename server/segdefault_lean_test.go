//go:build !(flurry_full || flurry_sql)

package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment/filestore"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server/config"
)

// TestDefaultSegmentRefusesEarlierSQLite: a build without SQLite refuses to start
// the default segment namespace over an earlier flurry's segments.db, naming the
// file and the tag, instead of issuing its IDs again from 1.
func TestDefaultSegmentRefusesEarlierSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := t.TempDir()
	legacy := filepath.Join(data, "segments.db")
	if err := os.WriteFile(legacy, []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = data
	s, err := New(ctx, Options{Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: slog.New(slog.DiscardHandler), Version: "test"})
	if err == nil {
		s.Close(ctx)
		t.Fatal("started over an earlier flurry's segments.db")
	}
	if !strings.Contains(err.Error(), legacy) || !strings.Contains(err.Error(), "-tags flurry_sql (or flurry_full)") {
		t.Errorf("error %q does not name %s and the tag", err, legacy)
	}
	if has, _ := filestore.HasState(filepath.Join(data, "segments")); has {
		t.Error("a file store was started beside the SQLite file")
	}
}
