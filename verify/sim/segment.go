package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/memstore"
)

// SegConfig describes one run of the segment simulation: allocators of one tag over
// several stores (residue classes), with ranges handed back on graceful restarts and
// stores failing over.
type SegConfig struct {
	Seed       uint64
	Allocators int
	Stores     int
	Duration   time.Duration
	Step       int64   // the tag's configured step
	Rate       float64 // ID requests per allocator per second (1 to 20 IDs each)
	// Per allocator per hour.
	KillPerHour  float64 // crash (two in three) or graceful restart (Close, which hands ranges back)
	PausePerHour float64
	// Per store per hour.
	OutagePerHour float64
	LossProb      float64
	// LaggingReplica makes one Take in 20 hand out values an earlier Take handed out,
	// as a store that failed over to a replica missing the last writes does: a broken
	// store, to show that the checker catches what it causes.
	LaggingReplica bool
}

// DefaultSegConfig is the configuration of the documented runs.
func DefaultSegConfig() SegConfig {
	return SegConfig{Allocators: 50, Stores: 3, Duration: 30 * time.Minute, Step: 200, Rate: 5,
		KillPerHour: 2, PausePerHour: 2, OutagePerHour: 6, LossProb: 0.002}
}

// PollEvery implements sched.Poller: code on a node's clock polls the channels it
// waits on every 50 ms of simulated time.
func (n *Node) PollEvery() time.Duration { return 50 * time.Millisecond }

// IntN implements sched.Chooser from the simulation's seeded source.
func (n *Node) IntN(k int) int { return n.sim.rng.IntN(k) }

// SegWorld is one run of the segment simulation.
type SegWorld struct {
	cfg    SegConfig
	sim    *Sim
	stores []*memstore.Store
	nets   []netFaults
	allocs []*segNode
	log    *slog.Logger
	ended  bool

	issued   []intervals // per store: the counter values issued
	byKind   map[string]int64
	first    []Violation
	IDs      int64
	Fetches  int64
	Returns  int64
	Kills    int64
	Graceful int64
	Outages  int64
	Failed   int64 // requests refused (ErrUnavailable or waiting)
}

type segNode struct {
	*Node
	w        *SegWorld
	inc      int
	last     flurry.ID
	restart  bool
	a        *segment.Allocator
	held     map[int][]segment.Block // blocks taken by this process, per store (the last few)
	returned map[int][]segment.Block
}

// segStore is store k of a SegWorld: the in-memory store behind a simulated network
// with faults, telling the checker which process took and returned what.
type segStore struct {
	w    *SegWorld
	k    int
	node *segNode
}

func (st *segStore) Take(ctx context.Context, tag string, n, floor, limit int64) (segment.Block, error) {
	var b segment.Block
	err := transport(st.w.sim, &st.w.nets[st.k], ctx, func() error {
		var err error
		b, err = st.w.stores[st.k].Take(context.Background(), tag, n, floor, limit)
		if err == nil && st.w.cfg.LaggingReplica && !b.Returned && st.w.sim.rng.IntN(20) == 0 && b.First > b.Len() {
			b.First, b.Last = b.First-b.Len()/2, b.Last-b.Len()/2
		}
		if err == nil {
			st.w.Fetches++
			h := append(st.node.held[st.k], b)
			if len(h) > 6 {
				h = h[1:]
			}
			st.node.held[st.k] = h
		}
		return err
	})
	return b, err
}

func (st *segStore) Return(ctx context.Context, tag string, b segment.Block) error {
	return transport(st.w.sim, &st.w.nets[st.k], ctx, func() error {
		err := st.w.stores[st.k].Return(context.Background(), tag, b)
		if err == nil {
			st.w.Returns++
			st.node.returned[st.k] = append(st.node.returned[st.k], b)
			// Nothing of a returned range may have been issued.
			if st.w.issued[st.k].overlaps(b.First, b.Last) {
				st.w.violate("returned-issued", st.node, 0, fmt.Sprintf("store %d: range %d..%d handed back holds issued values", st.k, b.First, b.Last))
			}
		}
		return err
	})
}

func (st *segStore) Create(ctx context.Context, t segment.Tag) error {
	return st.w.stores[st.k].Create(ctx, t)
}
func (st *segStore) SetStep(ctx context.Context, tag string, step int64) error {
	return st.w.stores[st.k].SetStep(ctx, tag, step)
}
func (st *segStore) Tags(ctx context.Context) ([]segment.Tag, error) {
	var out []segment.Tag
	err := transport(st.w.sim, &st.w.nets[st.k], ctx, func() error {
		var err error
		out, err = st.w.stores[st.k].Tags(context.Background())
		return err
	})
	return out, err
}
func (st *segStore) Close() error { return nil }

// NewSegWorld builds a run; Run runs it.
func NewSegWorld(cfg SegConfig) (*SegWorld, error) {
	def := DefaultSegConfig()
	if cfg.Allocators == 0 {
		cfg.Allocators = def.Allocators
	}
	if cfg.Stores == 0 {
		cfg.Stores = def.Stores
	}
	if cfg.Duration == 0 {
		cfg.Duration = def.Duration
	}
	if cfg.Step == 0 {
		cfg.Step = def.Step
	}
	if cfg.Rate == 0 {
		cfg.Rate = def.Rate
	}
	s := New(cfg.Seed, simStart)
	w := &SegWorld{cfg: cfg, sim: s, log: slog.New(slog.NewTextHandler(io.Discard, nil)), byKind: map[string]int64{}}
	for k := 0; k < cfg.Stores; k++ {
		m := memstore.New()
		if err := m.Create(context.Background(), segment.Tag{Name: "sim", Step: cfg.Step}); err != nil {
			return nil, err
		}
		w.stores = append(w.stores, m)
		w.nets = append(w.nets, netFaults{lossProb: cfg.LossProb, driverWait: int64(15 * time.Second)})
		w.issued = append(w.issued, nil)
		w.storeFaults(k)
	}
	for i := 0; i < cfg.Allocators; i++ {
		n := &segNode{Node: newNode(s, i, 0, 0), w: w}
		w.allocs = append(w.allocs, n)
		s.At(s.now+s.rng.Int64N(int64(2*time.Second)), n.boot)
		n.faults()
	}
	return w, nil
}

func (w *SegWorld) exp(perHour float64) int64 {
	if perHour <= 0 {
		return 1 << 62
	}
	return int64(w.sim.rng.ExpFloat64() / perHour * float64(time.Hour))
}

func (w *SegWorld) violate(kind string, n *segNode, id flurry.ID, detail string) {
	w.byKind[kind]++
	if len(w.first) < keepViolations {
		w.first = append(w.first, Violation{Kind: kind, Node: n.ID, Inc: n.inc, At: time.Duration(w.sim.now - simStart), ID: id, Detail: detail})
	}
}

func (w *SegWorld) storeFaults(k int) {
	s := w.sim
	var outage func()
	outage = func() {
		s.At(s.now+w.exp(w.cfg.OutagePerHour), func() {
			if w.ended {
				return
			}
			w.Outages++
			d := int64(s.rng.ExpFloat64() * float64(10*time.Second))
			if s.rng.IntN(4) == 0 {
				d += int64(time.Minute) + s.rng.Int64N(int64(3*time.Minute))
			}
			w.nets[k].downUntil = max(w.nets[k].downUntil, s.now+d)
			outage()
		})
	}
	outage()
}

func (n *segNode) boot() {
	if n.w.ended {
		return
	}
	n.inc++
	n.last = 0
	n.held, n.returned = map[int][]segment.Block{}, map[int][]segment.Block{}
	n.restartProcess()
	n.client = n.w.sim.Go(n.Node, n.run)
}

func (n *segNode) run() {
	w, s := n.w, n.w.sim
	var stores []segment.Store
	for k := range w.stores {
		stores = append(stores, &segStore{w: w, k: k, node: n})
	}
	a, err := segment.New(context.Background(), segment.Options{Stores: stores, Tag: "sim", Clock: n.Node, Logger: w.log,
		Target: time.Minute, FetchTimeout: time.Second, RetryMax: 2 * time.Second})
	if err != nil {
		// Every store failed the first fetch: start again a little later.
		s.park(context.Background(), s.now+int64(time.Second))
		n.boot()
		return
	}
	n.a = a
	for {
		s.park(context.Background(), s.now+int64(s.rng.ExpFloat64()/w.cfg.Rate*1e9)+1)
		if n.restart {
			n.restart = false
			w.Graceful++
			ctx, cancel := n.WithTimeout(context.Background(), 5*time.Second)
			a.Close(ctx)
			cancel()
			n.a = nil
			n.boot()
			return
		}
		k := 1 + s.rng.IntN(20)
		for i := 0; i < k; i++ {
			ctx, cancel := n.WithTimeout(context.Background(), 200*time.Millisecond)
			id, err := a.Next(ctx)
			cancel()
			if err != nil {
				if !errors.Is(err, segment.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
					w.violate("error", n, 0, fmt.Sprintf("Next: unexpected error %v", err))
				}
				w.Failed++
				break
			}
			n.check(id)
		}
		s.Trace(int64(n.ID), int64(n.last))
	}
}

func (n *segNode) faults() {
	w, s := n.w, n.w.sim
	var kill, pause func()
	kill = func() {
		s.At(s.now+w.exp(w.cfg.KillPerHour), func() {
			if w.ended {
				return
			}
			if n.a != nil {
				w.Kills++
				if s.rng.IntN(3) == 0 {
					n.restart = true
				} else {
					s.Kill(n.Node)
					n.a = nil
					s.At(s.now+s.rng.Int64N(int64(3*time.Second)), n.boot)
				}
			}
			kill()
		})
	}
	pause = func() {
		s.At(s.now+w.exp(w.cfg.PausePerHour), func() {
			if w.ended {
				return
			}
			n.pausedUntil = max(n.pausedUntil, s.now+int64(100*time.Millisecond)+s.rng.Int64N(int64(20*time.Second)))
			pause()
		})
	}
	kill()
	pause()
}

// check checks one ID the node's allocator returned.
func (n *segNode) check(id flurry.ID) {
	w := n.w
	N := int64(len(w.stores))
	w.IDs++
	if id <= 0 {
		w.violate("range", n, id, "not positive")
		return
	}
	k, c := int(int64(id)%N), int64(id)/N
	if id <= n.last {
		w.violate("order-allocator", n, id, fmt.Sprintf("after %d from the same allocator", int64(n.last)))
	}
	n.last = id
	if !w.issued[k].add(c) {
		w.violate("duplicate", n, id, fmt.Sprintf("store %d counter %d issued before", k, c))
	}
	held := false
	for _, b := range n.held[k] {
		if b.First <= c && c <= b.Last {
			held = true
		}
	}
	for _, b := range n.returned[k] {
		if b.First <= c && c <= b.Last {
			held = false
		}
	}
	if !held {
		w.violate("held", n, id, fmt.Sprintf("store %d counter %d is not in a range this process holds", k, c))
	}
	w.sim.Trace(int64(id))
}

// Run runs the simulation and returns its report.
func (w *SegWorld) Run() *SegReport {
	start := time.Now()
	w.sim.Run(simStart + int64(w.cfg.Duration))
	r := &SegReport{Config: w.cfg, TraceHash: w.sim.TraceHash(), Events: w.sim.Events, IDs: w.IDs, Fetches: w.Fetches,
		Returns: w.Returns, Kills: w.Kills, Graceful: w.Graceful, Outages: w.Outages, Failed: w.Failed,
		Violations: w.first, ByKind: w.byKind, Elapsed: time.Since(start)}
	w.ended = true
	for _, n := range w.allocs {
		n.pausedUntil = 0
		w.sim.Kill(n.Node)
	}
	w.sim.Run(w.sim.now)
	return r
}

// SegReport is the outcome of a segment run.
type SegReport struct {
	Config                                                          SegConfig
	TraceHash                                                       uint64
	Events, IDs, Fetches, Returns, Kills, Graceful, Outages, Failed int64
	Violations                                                      []Violation
	ByKind                                                          map[string]int64
	Elapsed                                                         time.Duration
}

// Summary is one line for people.
func (r *SegReport) Summary() string {
	c := r.Config
	return fmt.Sprintf("segment seed=%d allocators=%d stores=%d hours=%.2f: %d IDs, %d ranges taken, %d handed back, %d kills (%d graceful), %d store outages, %d requests refused; violations %v; %d events in %v; trace %016x",
		c.Seed, c.Allocators, c.Stores, c.Duration.Hours(), r.IDs, r.Fetches, r.Returns, r.Kills, r.Graceful, r.Outages, r.Failed,
		r.ByKind, r.Events, r.Elapsed.Round(time.Millisecond), r.TraceHash)
}

// intervals is a set of int64 kept as sorted disjoint closed intervals.
type intervals []interval

type interval struct{ a, b int64 }

// add inserts c and reports whether it was new.
func (s *intervals) add(c int64) bool {
	v := *s
	i := sort.Search(len(v), func(i int) bool { return v[i].b >= c }) // first interval ending at or after c
	if i < len(v) && v[i].a <= c {
		return false
	}
	joinLeft := i > 0 && v[i-1].b == c-1
	joinRight := i < len(v) && v[i].a == c+1
	switch {
	case joinLeft && joinRight:
		v[i-1].b = v[i].b
		*s = append(v[:i], v[i+1:]...)
	case joinLeft:
		v[i-1].b = c
	case joinRight:
		v[i].a = c
	default:
		v = append(v, interval{})
		copy(v[i+1:], v[i:])
		v[i] = interval{c, c}
		*s = v
	}
	return true
}

// overlaps reports whether any of a..b is in the set.
func (s intervals) overlaps(a, b int64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].b >= a })
	return i < len(s) && s[i].a <= b
}
