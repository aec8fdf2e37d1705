package harness

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress writes the harness's progress lines, each stamped with the time (UTC,
// to the millisecond) and written whole, so that the faults' goroutines do not
// interleave them. Both systems, Cluster and Regions, log through it. A zero
// progress discards every line.
type progress struct {
	w  io.Writer // nil: discard
	mu sync.Mutex
}

func (p *progress) logf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s harness: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
