// Package bench compares flurry's snowflake generator with peer ID libraries.
//
// It is a separate module so that the peers never become dependencies of flurry
// itself; run it with ./run.sh or `go test -run '^$' -bench . -benchmem`.
package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bwsnow "github.com/bwmarrin/snowflake"
	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/sony/sonyflake/v2"
	"github.com/yitter/idgenerator-go/idgen"
)

// The two layouts every implementation is measured on.
const (
	// layout22Text has a 22-bit sequence (4,194,304 IDs per ms), so the per-node
	// cap is never what limits a benchmark: it measures CPU cost.
	layout22Text = "time:40:1ms:2024-01-01T00:00:00Z,worker:1,seq:22"
	epoch22Ms    = 1704067200000 // 2024-01-01T00:00:00Z

	// twitterEpochMs is the epoch of the "twitter" preset (41/5/5/12 bits).
	twitterEpochMs = 1288834974657
	// twitterCap is the twitter layout's per-node cap: 4096 IDs per 1 ms tick.
	twitterCap = 4_096_000.0
)

var (
	bg = context.Background()

	layout22    *layout.Layout
	layoutTw    *layout.Layout
	bwNode22    *bwsnow.Node // StepBits 21, NodeBits 1: bwmarrin allows 22 bits for node+step
	bwNodeTw    *bwsnow.Node // NodeBits 10, StepBits 12, Twitter epoch
	namespaceNo atomic.Int64

	// Package-level sinks for serial benchmarks, so results are not optimised away.
	sinkID   flurry.ID
	sinkI64  int64
	sinkBW   bwsnow.ID
	sinkXID  xid.ID
	sinkUUID uuid.UUID
	sinkULID ulid.ULID

	// publish receives each RunParallel goroutine's last result once, at its end.
	publishMu sync.Mutex
	published []any
)

func publish(v any) {
	publishMu.Lock()
	published = append(published[:0], v)
	publishMu.Unlock()
}

func TestMain(m *testing.M) {
	var err error
	if layout22, err = layout.Parse(layout22Text); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if layoutTw, err = layout.Parse("twitter"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// bwmarrin/snowflake configures itself through package variables, read by
	// NewNode; each Node keeps its own copy of the shifts and the epoch. Set them
	// once here, build both nodes, and leave the package at its Twitter defaults.
	bwsnow.Epoch, bwsnow.NodeBits, bwsnow.StepBits = epoch22Ms, 1, 21
	if bwNode22, err = bwsnow.NewNode(1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bwsnow.Epoch, bwsnow.NodeBits, bwsnow.StepBits = twitterEpochMs, 10, 12
	if bwNodeTw, err = bwsnow.NewNode(1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// nodeFor returns a node value with every node field set to 1.
func nodeFor(l *layout.Layout) layout.NodeValues {
	var nv layout.NodeValues
	for i := range l.NodeFields() {
		nv[i] = 1
	}
	return nv
}

// newFlurry returns a generator on l with a namespace of its own, closed (with its
// coarse clock, if coarse) when the benchmark or test run ends.
func newFlurry(tb testing.TB, l *layout.Layout, coarse bool, o snowflake.Options) *snowflake.Generator {
	tb.Helper()
	o.Layout = l
	o.Node = nodeFor(l)
	o.Namespace = "bench-" + strconv.FormatInt(namespaceNo.Add(1), 10)
	if coarse {
		c := clock.NewCoarse(clock.NewSystem(), time.Millisecond)
		tb.Cleanup(func() { c.Close() })
		o.Clock = c
	}
	g, err := snowflake.New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := g.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return g
}

// lanesFor is the lane count for the per-CPU mode: a power of two, at least 2 and
// at least GOMAXPROCS, so every RunParallel goroutine gets a lane of its own.
func lanesFor() int {
	n := 2
	for n < runtimeProcs() {
		n *= 2
	}
	return n
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

func newSonyflake(tb testing.TB, seqBits, machineBits int, unit time.Duration, startMs int64) *sonyflake.Sonyflake {
	tb.Helper()
	sf, err := sonyflake.New(sonyflake.Settings{
		BitsSequence:  seqBits,
		BitsMachineID: machineBits,
		TimeUnit:      unit,
		StartTime:     time.UnixMilli(startMs),
		MachineID:     func() (int, error) { return 1, nil },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return sf
}

// newYitter builds an instance of yitter's generator (not its package-level
// singleton idgen.NextId, which SetIdGenerator replaces for the whole process).
// NewDefaultIdGenerator panics on bad options and sleeps 500 µs for method 1.
// Method 1 is yitter's default "drift" algorithm, which borrows future
// milliseconds when a millisecond's sequence runs out; method 2 is the
// traditional one, which waits. MinSeqNumber 5 is yitter's minimum: sequence
// values 0-4 of every millisecond are reserved for clock rollback.
func newYitter(method uint16, workerBits, seqBits byte, baseMs int64) *idgen.DefaultIdGenerator {
	return idgen.NewDefaultIdGenerator(&idgen.IdGeneratorOptions{
		Method:            method,
		BaseTime:          baseMs,
		WorkerId:          1,
		WorkerIdBitLength: workerBits,
		SeqBitLength:      seqBits,
		MinSeqNumber:      5,
		TopOverCostCount:  2000,
	})
}

// envSeconds reads a duration in seconds from the environment.
func envSeconds(name string, def float64) time.Duration {
	if s := os.Getenv(name); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Second))
		}
		fmt.Fprintf(os.Stderr, "bench: ignoring %s=%q: want a positive number of seconds\n", name, s)
	}
	return time.Duration(def * float64(time.Second))
}
