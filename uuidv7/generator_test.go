package uuidv7

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
)

var bg = context.Background()

// repeatReader returns its bytes over and over.
type repeatReader struct {
	b []byte
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for k := range p {
		p[k] = r.b[r.i%len(r.b)]
		r.i++
	}
	return len(p), nil
}

// failReader fails once its first n bytes are read.
type failReader struct{ n int }

func (r *failReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("entropy gone")
	}
	k := min(r.n, len(p))
	clear(p[:k])
	r.n -= k
	return k, nil
}

func newGen(t testing.TB, o Options) *Generator {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func next(t testing.TB, g *Generator) UUID {
	t.Helper()
	u, err := g.Next(bg)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The generator reproduces RFC 9562's example exactly, given its time (with the
// sub-millisecond fraction 0xCC3 = 3267/4096 ms, i.e. 797,608 ns) and its random bits.
func TestRFCVectorGenerated(t *testing.T) {
	f := clock.NewFake(time.Unix(0, rfcVectorMs*1e6+797_608))
	g := newGen(t, Options{Clock: f, Rand: &repeatReader{b: rfcBytes[8:]}})
	if u := next(t, g); u != rfcBytes {
		t.Fatalf("Next = %v, want %v", u, rfcBytes)
	}
	// One fraction step earlier is 0xcc2.
	f.Set(time.Unix(0, rfcVectorMs*1e6+797_607))
	g = newGen(t, Options{Clock: f, Rand: &repeatReader{b: rfcBytes[8:]}})
	if u := next(t, g); u[7] != 0xc2 {
		t.Errorf("797,607 ns gave rand_a %x%02x, want cc2", u[6]&0xf, u[7])
	}
}

// With a clock that stands still, IDs count up through the millisecond's fractions,
// then borrow the next milliseconds up to MaxDrift, then wait (the fake clock's
// SleepUntil moves it) rather than run further ahead.
func TestStandingClockBorrowsThenWaits(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	g := newGen(t, Options{Clock: f, MaxDrift: 2 * time.Millisecond})
	ids := make([]UUID, 4096*3)
	if n, err := g.NextN(bg, ids); err != nil || n != len(ids) {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	if _, k := f.Slept(); k != 0 {
		t.Fatalf("slept %d times within the drift bound", k)
	}
	for i, u := range ids {
		if ms, want := u.UnixMilli(), start.UnixMilli()+int64(i/4096); ms != want {
			t.Fatalf("ID %d in ms %d, want %d", i, ms, want)
		}
		if frac := int(u[6]&0xf)<<8 | int(u[7]); frac != i%4096 {
			t.Fatalf("ID %d has fraction %d", i, frac)
		}
	}
	u := next(t, g) // ms start+3 is 3 ms ahead: wait until the clock is at start+1
	if d, k := f.Slept(); k != 1 || d != time.Millisecond {
		t.Errorf("slept %v in %d sleeps, want 1ms in 1", d, k)
	}
	if u.UnixMilli() != start.UnixMilli()+3 || u.Compare(ids[len(ids)-1]) != 1 {
		t.Errorf("after the wait: %v (%v)", u, u.Time())
	}
}

// A negative MaxDrift never runs ahead: the 4,097th ID of a millisecond waits for
// the next one.
func TestNoDrift(t *testing.T) {
	f := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 500_000, time.UTC)) // fraction 2048
	g := newGen(t, Options{Clock: f, MaxDrift: -1})
	ids := make([]UUID, 2049)
	if _, err := g.NextN(bg, ids); err != nil {
		t.Fatal(err)
	}
	if _, k := f.Slept(); k != 1 {
		t.Errorf("slept %d times, want 1", k)
	}
	for i, u := range ids {
		if u.UnixMilli() > f.Now()/1e6 {
			t.Fatalf("ID %d in ms %d, ahead of the clock at %d", i, u.UnixMilli(), f.Now()/1e6)
		}
	}
}

// A clock step backwards does not stop the generator or make it go back: IDs go on
// inside the last issued millisecond, and once its fractions run out they wait for
// the clock.
func TestClockBackwards(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 999_000_000, time.UTC) // fraction 0
	f := clock.NewFake(start)
	g := newGen(t, Options{Clock: f, MaxDrift: 10 * time.Millisecond})
	prev := next(t, g)
	f.Add(-5 * time.Second)
	ids := make([]UUID, 4095)
	if _, err := g.NextN(bg, ids); err != nil {
		t.Fatal(err)
	}
	if _, k := f.Slept(); k != 0 {
		t.Fatalf("slept inside the last millisecond")
	}
	for _, u := range ids {
		if u.Compare(prev) != 1 || u.UnixMilli() != start.UnixMilli() {
			t.Fatalf("%v after %v", u, prev)
		}
		prev = u
	}
	u := next(t, g) // needs start+1 ms: the clock must reach start+1-10 ms
	if d, _ := f.Slept(); d != 5*time.Second-9*time.Millisecond {
		t.Errorf("slept %v, want 4.991s", d)
	}
	if u.Compare(prev) != 1 {
		t.Errorf("%v after %v", u, prev)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	f := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := newGen(t, Options{Clock: f, MaxDrift: -1})
	ids := make([]UUID, 4096)
	if _, err := g.NextN(bg, ids); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := g.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context at the cap = %v", err)
	}
	if n, err := g.NextN(ctx, ids[:2]); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	if u := next(t, g); u.Compare(ids[4095]) != 1 {
		t.Errorf("resumed with %v after %v", u, ids[4095])
	}
}

func TestTimeFieldLimits(t *testing.T) {
	f := clock.NewFake(time.Unix(0, -1))
	g := newGen(t, Options{Clock: f})
	if _, err := g.Next(bg); !errors.Is(err, ErrBeforeEpoch) {
		t.Errorf("before 1970: %v", err)
	}
	f.Set(time.Unix(0, 0))
	if u := next(t, g); u.UnixMilli() != 0 || !u.IsV7() {
		t.Errorf("at the epoch: %v", u)
	}
	// A clock's int64 nanoseconds end in 2262, long before the 48-bit field (10889):
	// reach the end of the field through the generator's state instead.
	g.last = (1<<48-1)<<12 | 0xffe
	if u := next(t, g); u.UnixMilli() != 1<<48-1 || u[6] != 0x7f || u[7] != 0xff {
		t.Errorf("last value of the field: %v", u)
	}
	if _, err := g.Next(bg); !errors.Is(err, ErrExhausted) {
		t.Errorf("past the 48-bit field: %v", err)
	}
}

func TestRandError(t *testing.T) {
	if _, err := New(Options{Rand: &failReader{}}); err == nil {
		t.Fatal("New with a failing Rand succeeded")
	}
	g := newGen(t, Options{Rand: &failReader{n: randBatch}})
	ids := make([]UUID, randBatch/8+1)
	n, err := g.NextN(bg, ids)
	if n != randBatch/8 || err == nil {
		t.Fatalf("NextN = %d, %v; want %d and the reader's error", n, err, randBatch/8)
	}
}

// A fresh generator's IDs carry the time of the clock and are valid version 7 UUIDs
// whose random bits differ.
func TestSystemClock(t *testing.T) {
	g := newGen(t, Options{})
	before := time.Now().UnixMilli()
	a, b := next(t, g), next(t, g)
	after := time.Now().UnixMilli()
	if a.UnixMilli() < before-1 || b.UnixMilli() > after+1 {
		t.Errorf("IDs at %d, %d; clock between %d and %d", a.UnixMilli(), b.UnixMilli(), before, after)
	}
	if !a.IsV7() || !b.IsV7() || a.Compare(b) != -1 || bytes.Equal(a[8:], b[8:]) {
		t.Errorf("%v then %v", a, b)
	}
}

// maxClock is a fake clock that remembers the largest reading it returned.
type maxClock struct {
	*clock.Fake
	max atomic.Int64
}

func (c *maxClock) Now() int64 {
	n := c.Fake.Now()
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			return n
		}
	}
}

// The property test: 8 goroutines share a generator while they move its clock back
// and forth like a bad NTP daemon. No two IDs are equal; each goroutine sees its IDs
// increase; a call that started after another returned got a larger ID; and no ID
// runs more than MaxDrift ahead of the largest clock reading.
func TestPropertyConcurrentJumpingClock(t *testing.T) {
	const workers = 8
	perWorker := 20000
	if raceEnabled || testing.Short() {
		perWorker = 4000
	}
	c := &maxClock{Fake: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	drift := 3 * time.Millisecond
	g := newGen(t, Options{Clock: c, MaxDrift: drift})

	type call struct {
		id         UUID
		start, end int64
	}
	var seq atomic.Int64
	calls := make([][]call, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			buf := make([]UUID, 5)
			for len(calls[w]) < perWorker {
				switch r := rng.IntN(1000); {
				case r < 30:
					c.Add(time.Duration(rng.IntN(3000)) * time.Microsecond)
				case r < 45:
					c.Add(-time.Duration(rng.IntN(3000)) * time.Microsecond)
				case r < 47:
					c.Add(-time.Duration(rng.IntN(2000)) * time.Millisecond)
				case r < 48:
					c.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
				}
				s := seq.Add(1)
				if rng.IntN(10) == 0 {
					n, err := g.NextN(bg, buf[:1+rng.IntN(len(buf))])
					e := seq.Add(1)
					if err != nil {
						t.Error(err)
						return
					}
					for _, u := range buf[:n] {
						calls[w] = append(calls[w], call{u, s, e})
					}
					continue
				}
				u, err := g.Next(bg)
				e := seq.Add(1)
				if err != nil {
					t.Error(err)
					return
				}
				calls[w] = append(calls[w], call{u, s, e})
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var all []call
	for w, cs := range calls {
		for i := 1; i < len(cs); i++ {
			if cs[i].id.Compare(cs[i-1].id) != 1 {
				t.Fatalf("worker %d: %v after %v", w, cs[i].id, cs[i-1].id)
			}
		}
		all = append(all, cs...)
	}
	limit := c.max.Load()/1e6 + drift.Milliseconds()
	for _, cl := range all {
		if !cl.id.IsV7() {
			t.Fatalf("%v is not a version 7 UUID", cl.id)
		}
		if cl.id.UnixMilli() > limit {
			t.Fatalf("%v is at ms %d, beyond the largest clock reading + MaxDrift (%d)", cl.id, cl.id.UnixMilli(), limit)
		}
	}
	// Sorted by ID, the calls must also be sorted by when they happened: an ID below
	// another must not come from a call that started after the other's returned.
	slices.SortFunc(all, func(a, b call) int { return a.id.Compare(b.id) })
	maxStart := int64(-1)
	for i, cl := range all {
		if i > 0 && cl.id == all[i-1].id {
			t.Fatalf("duplicate %v", cl.id)
		}
		if cl.end < maxStart {
			t.Fatalf("%v: its call ended at %d, before a call for a smaller ID started (%d)", cl.id, cl.end, maxStart)
		}
		maxStart = max(maxStart, cl.start)
	}
	_, sleeps := c.Slept()
	t.Logf("%d IDs, %d sleeps", len(all), sleeps)
}

func TestNextAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	g := newGen(t, Options{MaxDrift: time.Hour})
	var u UUID
	ids := make([]UUID, 100)
	if n := testing.AllocsPerRun(10000, func() { u, _ = g.Next(bg) }); n != 0 {
		t.Errorf("Next: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = g.NextN(bg, ids) }); n != 0 {
		t.Errorf("NextN: %v allocs, want 0", n)
	}
	_ = u
}

var _ io.Reader = (*repeatReader)(nil)
