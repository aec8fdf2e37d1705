package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server/config"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLifeLowInDays: the warning that a layout runs out within a year says how
// long in days, not as 5607h0m0s.
func TestLifeLowInDays(t *testing.T) {
	epoch := time.Now().UTC().Add(-300 * 24 * time.Hour).Format(time.RFC3339)
	yaml := fmt.Sprintf("data_dir: %s\nnamespaces:\n  near:\n    strategy: snowflake\n    snowflake:\n      layout: 'time:35:1ms:%s,worker:4,seq:24'\n", t.TempDir(), epoch)
	cfg, err := config.Parse("test.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, Options{Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "runs out soon") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	out := logs.String()
	if !strings.Contains(out, "runs out soon") || !strings.Contains(out, ` left="9`) || !strings.Contains(out, ` days"`) {
		t.Fatalf("no warning in days:\n%s", out)
	}
}
