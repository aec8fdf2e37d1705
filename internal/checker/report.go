package checker

import (
	"io"
	"time"

	"github.com/flurryid/flurry/internal/plot"
)

// WriteMarkdown writes r as the Markdown tables of docs/reliability.md: a summary
// per namespace, the anomalies with examples, and one table per fault window.
func WriteMarkdown(w io.Writer, r Result) error {
	return nil // TODO
}

// Origin returns the instant that Throughput and Bands count X from: when the first
// op was sent (the zero time before any op).
func (c *Checker) Origin() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.first)
}

// Throughput returns, per namespace, the IDs received per second in buckets of the
// given length, by when each op was answered: X is seconds since [Checker.Origin]
// (the middle of the bucket), Y is IDs/s. Buckets with no ID are present with Y=0,
// so an outage shows as a drop to zero.
func (c *Checker) Throughput(bucket time.Duration) []plot.Series {
	return nil // TODO
}

// Bands turns fault windows into shaded bands of a chart whose X axis is seconds
// since [Checker.Origin], as Throughput's is.
func (c *Checker) Bands(windows []Window) []plot.Band {
	o := c.Origin()
	out := make([]plot.Band, 0, len(windows))
	for _, w := range windows {
		out = append(out, plot.Band{From: w.Start.Sub(o).Seconds(), To: w.End.Sub(o).Seconds(), Label: w.Name})
	}
	return out
}
