package objectid

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"sync"

	"github.com/flurryid/flurry/clock"
)

// perSecond is how many IDs a Generator issues with one time field: every counter
// value once.
const perSecond = 1 << 24

// Options configures a Generator. The zero Options is valid: the system clock and
// crypto/rand.
type Options struct {
	// Clock is the time source. Nil means clock.NewSystem(), which never goes back
	// inside a process even when the wall clock does.
	Clock clock.Clock

	// Rand is read once, by New, for the 5-byte random value and the counter's
	// 3-byte start. Nil means crypto/rand; anything else is for tests and examples
	// (two generators given the same bytes issue the same IDs).
	Rand io.Reader
}

// Generator issues ObjectIds; see the package documentation for what it guarantees.
// It is safe for concurrent use: its state (counter, current second and how many IDs
// it issued in it) is under a mutex that is never held while it sleeps.
type Generator struct {
	clk    clock.Clock
	random [5]byte
	limit  uint32 // IDs per second: perSecond, lowered by tests

	mu      sync.Mutex
	counter uint32 // the next counter value, below 2^24
	sec     int64  // the time field of the last issued ID; -1 before the first
	inSec   uint32 // how many IDs were issued with sec
}

// New returns a Generator with a random value and counter start read from
// Options.Rand. It fails only when that reader fails.
func New(opts Options) (*Generator, error) {
	g := &Generator{clk: opts.Clock, limit: perSecond, sec: -1}
	if g.clk == nil {
		g.clk = clock.NewSystem()
	}
	var b [8]byte
	if opts.Rand == nil {
		_, _ = rand.Read(b[:]) // never fails: a failing OS source crashes the program
	} else if _, err := io.ReadFull(opts.Rand, b[:]); err != nil {
		return nil, fmt.Errorf("objectid: reading the random value: %w", err)
	}
	g.random = [5]byte(b[:5])
	g.counter = uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
	return g, nil
}

// Random returns the generator's 5-byte random value, which every ID it issues
// carries.
func (g *Generator) Random() [5]byte { return g.random }

// Next returns a new ObjectId. ctx bounds only a wait: when 2^24 IDs were issued in
// the current second, Next sleeps until the next one, and returns ctx.Err() if ctx
// ends first. The other errors are [ErrBeforeEpoch] and [ErrExhausted]. Nothing is
// issued with an error.
func (g *Generator) Next(ctx context.Context) (ID, error) {
	var one [1]ID
	_, err := g.NextN(ctx, one[:])
	return one[0], err
}

// NextN fills dst with new ObjectIds and returns how many it filled: len(dst)
// unless an error stopped it, which it then returns (the errors of Next). A batch is
// made under one lock from one clock reading, with consecutive counter values.
func (g *Generator) NextN(ctx context.Context, dst []ID) (int, error) {
	filled := 0
	for filled < len(dst) {
		now := g.clk.Now()
		if now < 0 {
			return filled, ErrBeforeEpoch
		}
		g.mu.Lock()
		n, waitSec, err := g.fill(dst[filled:], now/1e9)
		g.mu.Unlock()
		filled += n
		if err != nil {
			return filled, err
		}
		if waitSec > 0 {
			if err := g.clk.SleepUntil(ctx, waitSec*1e9); err != nil {
				return filled, err
			}
		}
	}
	return filled, nil
}

// fill issues IDs into dst at second sec (or the last issued second, if later) while
// the second has counter values left. It returns how many it issued and, when it
// stopped, the second to wait for. g.mu is held.
func (g *Generator) fill(dst []ID, sec int64) (n int, waitSec int64, err error) {
	sec = max(sec, g.sec) // the time field never goes back
	if sec >= 1<<32 {
		return 0, 0, ErrExhausted
	}
	if sec > g.sec {
		g.sec, g.inSec = sec, 0
	}
	for i := range dst {
		if g.inSec >= g.limit {
			return i, sec + 1, nil
		}
		c := g.counter
		g.counter = (c + 1) & (perSecond - 1)
		g.inSec++
		id := &dst[i]
		id[0], id[1], id[2], id[3] = byte(sec>>24), byte(sec>>16), byte(sec>>8), byte(sec)
		copy(id[4:9], g.random[:])
		id[9], id[10], id[11] = byte(c>>16), byte(c>>8), byte(c)
	}
	return len(dst), 0, nil
}
