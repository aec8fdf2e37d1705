package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// logCounter is the sessions' slog handler: it drops Info (one line per acquisition
// would bury the report), prints the first few warnings and errors, and counts them
// all by message.
type logCounter struct {
	w     io.Writer
	limit int

	mu      sync.Mutex
	printed int
	byMsg   map[string]int
}

func newLogCounter(w io.Writer, limit int) *logCounter {
	return &logCounter{w: w, limit: limit, byMsg: map[string]int{}}
}

func (h *logCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byMsg[r.Level.String()+" "+r.Message]++
	if h.printed < h.limit {
		h.printed++
		fmt.Fprintf(h.w, "session log: %s %s", r.Level, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(h.w, " %s=%v", a.Key, a.Value)
			return true
		})
		fmt.Fprintln(h.w)
	}
	return nil
}

func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }

// counts returns how many warnings and errors came, by level and message.
func (h *logCounter) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.byMsg))
	for k, v := range h.byMsg {
		out[k] = v
	}
	return out
}
