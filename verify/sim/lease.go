package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
)

// LeaseConfig describes one run of the lease simulation. Zero fields take the
// defaults of DefaultLeaseConfig.
type LeaseConfig struct {
	Seed     uint64
	Nodes    int           // simulated nodes
	Duration time.Duration // simulated time
	// Group is how many nodes share one pool (one scope: one value of the layout's dc
	// field); each pool has 16 values (the worker field), so nodes compete for values
	// and values pass from holder to holder. In every other group each node leases a
	// fixed value (Options.Fixed: its place in the group, as a StatefulSet ordinal
	// would be). Every other node's generator runs the Logical clock-behind policy,
	// the others Fail.
	Group int
	// Budget, TTL and Window are the sessions' (lease.Options); zero takes the
	// lease package's defaults (a one-minute budget and the TTL it needs).
	Budget time.Duration
	TTL    time.Duration
	Window time.Duration
	// NoJournal runs every node without a journal. Otherwise two nodes in three
	// keep one (lease.Journal, in memory that survives their crashes): a restart
	// resumes the crashed run's lease and starts above the journal's mark.
	NoJournal bool
	// SharedJournal starts, now and then, a second process on the journal of a
	// node whose process is running, as two processes on one data directory would
	// if the journal's lock did not stop the second (lease.OpenJournal): the
	// known-bad variant of resuming a lease without proof that its holder is gone.
	SharedJournal bool
	// Clones copies, now and then, the journal of a node that holds or held a lease
	// (running or crashed) into a new data directory and starts a process on it.
	// Restores restores a node's journal in place from a copy saved earlier, the
	// clock often coming back behind with it. Seams, with either, switches on
	// known-bad variants of resuming from such journals (Seam).
	Clones, Restores bool
	Seams            Seam
	// PPM bounds the rate error of each node's clock and of the store's clock
	// (uniform in ±PPM); Offset bounds how far each node's wall clock starts from
	// true time (uniform in ±Offset).
	PPM    float64
	Offset time.Duration
	// Rate is how many times a second each node asks for IDs (Poisson arrivals); a
	// request asks for 1 to 8 IDs, one in 200 for 1,000 (more than a tick holds).
	Rate   float64
	Faults Faults
	// Order is the sessions' acquisition order (zero: lease.OrderScope).
	Order lease.Order
	// Flaws switches on known-bad variants of the protocol around the real session
	// code, to show that the checker catches them (Flaw).
	Flaws Flaw
}

// Faults are the rates of injected faults. Per-node rates are per node per hour.
type Faults struct {
	KillPerHour  float64 // process crash (or, one in three, a graceful restart) and restart; one crash in four stays down past the TTL
	PausePerHour float64 // process pause: short, or past the TTL
	StepPerHour  float64 // wall clock step, forwards or back; a step back is often followed by a restart
	// Store-wide rates, per hour of simulated time.
	OutagePerHour float64 // the store fails every call
	SlowPerHour   float64 // replies come late, after the store applied the request
	LossProb      float64 // chance that a reply is lost after the store applied the request
	// MaxOutage, when set, caps every store outage.
	MaxOutage time.Duration
	// DiskStallProb is the chance that a journal write stalls for 1 to 8 s.
	DiskStallProb float64
}

// DefaultLeaseConfig is the configuration of the documented runs.
func DefaultLeaseConfig() LeaseConfig {
	return LeaseConfig{
		Nodes: 1000, Duration: time.Hour, Group: 15,
		PPM: 100, Offset: 500 * time.Millisecond, Rate: 1,
		Faults: Faults{KillPerHour: 1, PausePerHour: 1, StepPerHour: 0.5, OutagePerHour: 6, SlowPerHour: 12, LossProb: 0.002},
	}
}

// simLayout is the layout of the simulated IDs: 41 bits of milliseconds, 10 bits of
// pool (one per group of nodes), 4 leased bits (16 values per pool), 8 of sequence.
const simLayout = "time:41:1ms:2026-01-01T00:00:00Z,dc:10,worker:4,seq:8"

// simStart is the true time a simulation starts at.
var simStart = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// LeaseWorld is one run of the lease simulation.
type LeaseWorld struct {
	cfg   LeaseConfig
	sim   *Sim
	frng  *rand.Rand // the faults' own source: the same schedule of faults for every configuration of a seed
	lay   *layout.Layout
	store *memstore.Store
	sclk  *storeClock
	net   netFaults
	nodes []*leaseNode
	chk   checker
	log   *slog.Logger
	ns    string // unique to the world: its generators' namespace in the in-process guard
	ended bool

	// Availability, in node-nanoseconds of simulated time.
	Acct Availability
	// Counts.
	IDs, Requests, Acquisitions, Resumes, Kills, Restarts, Pauses, Steps, Outages, Slows int64
	// Copies and Restores count the journals copied and restored (Clones, Restores).
	Copies, Restores int64
	// alive names the processes running, by owner: a takeover from one of them is
	// a copy's, beside its original.
	alive map[string]bool
}

// Availability splits the node-time of a run: up and able to issue, acquiring a
// value (starting, or after a loss), fenced (holding or having held a value but
// refusing: the grant ran out, the lease was lost), the clock behind the mark, and
// down (crashed, not yet restarted).
type Availability struct {
	OK, Acquiring, Fenced, Behind, Down int64
}

// Unavailable is the fraction of the time a running node could not issue.
func (a Availability) Unavailable() float64 {
	up := a.OK + a.Acquiring + a.Fenced + a.Behind
	if up == 0 {
		return 0
	}
	return float64(a.Acquiring+a.Fenced+a.Behind) / float64(up)
}

type leaseNode struct {
	*Node
	w        *LeaseWorld
	group    int
	inc      int       // incarnation
	last     flurry.ID // last ID its current generator issued
	restart  bool      // a graceful restart is asked for
	gen      *snowflake.Generator
	sess     *lease.Session
	deadFrom int64
	tick     int64 // true time of the last availability sample
	starting bool  // in lease.NewGenerator
	owner    string
	scope    string
	journal  *journal // nil: the node keeps none
	fixedID  int      // a clone's: 1 + the ID of the node whose fixed value and journal it shares
}

// journal is a node's lease.Journal: memory that survives the node's crashes, as
// a file in its data directory does. A write takes simulated time (the fsync), and
// a crash during it leaves the entry as it was, as the rename of a fsync'd
// temporary file does.
type journal struct {
	n      *leaseNode
	entry  lease.JournalEntry
	copied bool // a copy of another node's, or of this one's other file: not saved here yet
}

func (j *journal) Load(context.Context) (lease.JournalEntry, error) {
	e := j.entry
	e.Copied = j.copied
	return e, nil
}

func (j *journal) Save(ctx context.Context, e lease.JournalEntry) error {
	s := j.n.w.sim
	d := int64(100*time.Microsecond) + s.rng.Int64N(int64(3*time.Millisecond))
	if p := j.n.w.cfg.Faults.DiskStallProb; p > 0 && s.rng.Float64() < p {
		d = int64(time.Second) + s.rng.Int64N(int64(7*time.Second)) // the disk stalls
	}
	if err := j.n.Node.SleepUntil(ctx, j.n.Node.Now()+d); err != nil {
		return err
	}
	j.entry, j.copied = e, false
	return nil
}

// NewLeaseWorld builds a run; Run runs it.
func NewLeaseWorld(cfg LeaseConfig) (*LeaseWorld, error) {
	def := DefaultLeaseConfig()
	if cfg.Nodes == 0 {
		cfg.Nodes = def.Nodes
	}
	if cfg.Duration == 0 {
		cfg.Duration = def.Duration
	}
	if cfg.Group == 0 {
		cfg.Group = def.Group
	}
	t, err := lease.ResolveTiming(cfg.Budget, cfg.TTL, cfg.Window)
	if err != nil {
		return nil, err
	}
	cfg.Budget, cfg.TTL, cfg.Window = t.Budget, t.TTL, t.Window
	if cfg.Rate == 0 {
		cfg.Rate = def.Rate
	}
	if cfg.Group > 16 {
		return nil, fmt.Errorf("sim: a group of %d nodes cannot all hold one of 16 values", cfg.Group)
	}
	if groups := (cfg.Nodes + cfg.Group - 1) / cfg.Group; groups > 1024 {
		return nil, fmt.Errorf("sim: %d nodes in groups of %d need %d pools; the layout has 1024", cfg.Nodes, cfg.Group, groups)
	}
	lay, err := layout.Parse(simLayout)
	if err != nil {
		return nil, err
	}
	s := New(cfg.Seed, simStart)
	w := &LeaseWorld{cfg: cfg, sim: s, lay: lay, log: slog.New(slog.NewTextHandler(io.Discard, nil)), alive: map[string]bool{}}
	w.ns = fmt.Sprintf("sim%p/", w)
	w.frng = rand.New(rand.NewPCG(cfg.Seed, 0x5eed_fa17))
	r := s.rng
	w.sclk = &storeClock{sim: s, ppm: (r.Float64()*2 - 1) * cfg.PPM, start: s.now}
	w.store = memstore.New(w.sclk)
	w.net = netFaults{lossProb: cfg.Faults.LossProb, driverWait: int64(15 * time.Second)}
	w.chk.init(w)
	for i := 0; i < cfg.Nodes; i++ {
		ppm := (r.Float64()*2 - 1) * cfg.PPM
		off := int64((r.Float64()*2 - 1) * float64(cfg.Offset))
		n := &leaseNode{Node: newNode(s, i, ppm, off), w: w, group: i / cfg.Group}
		if !cfg.NoJournal && i%3 != 0 {
			n.journal = &journal{n: n}
		}
		w.nodes = append(w.nodes, n)
		delay := r.Int64N(int64(5 * time.Second))
		s.At(s.now+delay, func() { n.boot() })
		n.scheduleFaults()
	}
	w.scheduleStoreFaults()
	if cfg.SharedJournal {
		w.scheduleClones()
	}
	if cfg.Clones {
		w.scheduleJournalCopies()
	}
	if cfg.Restores {
		for _, n := range w.nodes {
			if n.journal != nil {
				n.scheduleRestores()
			}
		}
	}
	return w, nil
}

func (w *LeaseWorld) exp(perHour float64) int64 {
	if perHour <= 0 {
		return math.MaxInt64 / 2
	}
	return int64(w.frng.ExpFloat64() / perHour * float64(time.Hour))
}

// boot starts a new process on the node.
func (n *leaseNode) boot() {
	w := n.w
	if w.ended {
		return
	}
	n.inc++
	n.owner = fmt.Sprintf("n%d.%d", n.ID, n.inc)
	n.scope = fmt.Sprintf("sim/dc=%d", n.group)
	n.tick, n.starting = w.sim.now, true
	w.alive[n.owner] = true
	n.restartProcess()
	if n.deadFrom != 0 {
		w.Acct.Down += w.sim.now - n.deadFrom
		n.deadFrom = 0
	}
	n.client = w.sim.Go(n.Node, n.run)
}

// run is a node's process: it starts a leased generator and asks it for IDs until
// the process is killed or restarted.
func (n *leaseNode) run() {
	w, s := n.w, n.w.sim
	owner := n.owner
	var st simStore = &LeaseStore{w: w, m: w.store, steps: flawSteps(w.cfg.Flaws, n.Node), owner: owner}
	if w.cfg.Seams&TakeoverKeepsToken != 0 {
		st = keepTokenStore{st.(*LeaseStore)}
	}
	if w.cfg.Flaws&AboveWithoutPlusOne != 0 {
		st = newLowMarkStore(st, w.lay.Unit())
	}
	gopts := snowflake.Options{Layout: w.lay, Clock: n.Node, Namespace: w.ns + owner}
	if n.ID%2 == 1 {
		gopts.Behind = snowflake.Logical
		gopts.MaxDrift = time.Minute
	}
	lopts := lease.Options{Store: st, Scope: "sim", Node: layout.NodeValues{int64(n.group)}, Leased: []string{"worker"},
		Owner: owner, Budget: w.cfg.Budget, TTL: w.cfg.TTL, Window: w.cfg.Window, Order: w.cfg.Order, Logger: w.log}
	if n.journal != nil {
		lopts.Journal = n.journal
		if w.cfg.Seams != 0 {
			lopts.Journal = seamJournal{n.journal, w.cfg.Seams}
		}
	}
	if n.group%2 == 1 {
		id := n.ID
		if n.fixedID != 0 {
			id = n.fixedID - 1
		}
		v := int64(id % w.cfg.Group)
		lopts.Fixed = &v
	}
	g, sess, err := lease.NewGenerator(context.Background(), gopts, lopts)
	if err != nil {
		w.chk.violate("start", n, 0, fmt.Sprintf("lease.NewGenerator: %v", err))
		return
	}
	n.gen, n.sess, n.last = g, sess, 0
	n.account(&w.Acct.Acquiring)
	n.starting = false
	for {
		s.park(context.Background(), s.now+int64(s.rng.ExpFloat64()/w.cfg.Rate*1e9)+1)
		if n.restart {
			n.restart = false
			n.account(&w.Acct.OK)
			n.closing = true
			sess.Close()
			g.Close()
			n.closing = false
			delete(w.alive, owner)
			w.Restarts++
			n.boot()
			return
		}
		k := 1 + s.rng.IntN(8)
		if s.rng.IntN(200) == 0 {
			k = 1000
		}
		w.Requests++
		// One Next at a time: the checker judges each ID by the clock read that decided it.
		var err error
		got := 0
		for ; got < k; got++ {
			var id flurry.ID
			if id, err = g.Next(context.Background()); err != nil {
				break
			}
			w.chk.issued(n, id)
		}
		w.IDs += int64(got)
		switch {
		case err == nil:
			n.account(&w.Acct.OK)
		case errors.Is(err, lease.ErrLost):
			n.account(&w.Acct.Fenced)
		case errors.Is(err, snowflake.ErrClockBehind):
			n.account(&w.Acct.Behind)
		default:
			n.account(&w.Acct.Fenced)
			w.chk.violate("error", n, 0, fmt.Sprintf("NextN: unexpected error %v", err))
		}
		s.Trace(int64(n.ID), int64(got))
	}
}

// account adds the time since the last sample to one bucket.
func (n *leaseNode) account(b *int64) {
	now := n.w.sim.now
	*b += now - n.tick
	n.tick = now
}

func (n *leaseNode) scheduleFaults() {
	w, s := n.w, n.w.sim
	f := w.cfg.Faults
	var kill, pause, step func()
	kill = func() {
		s.At(s.now+w.exp(f.KillPerHour), func() {
			if w.ended {
				return
			}
			graceful, delay := w.frng.IntN(3) == 0, w.frng.Int64N(int64(5*time.Second))
			if w.frng.IntN(4) == 0 {
				// Down past the TTL: the lease expires, and the value may pass to
				// another node before the journal's token comes back.
				delay = int64(w.cfg.TTL) + w.frng.Int64N(int64(w.cfg.TTL))
			}
			if n.client == nil || n.deadFrom != 0 {
				kill() // down already
				return
			}
			w.Kills++
			if graceful {
				n.restart = true // graceful: Close, then a new process
			} else {
				n.crash(delay)
			}
			kill()
		})
	}
	pause = func() {
		s.At(s.now+w.exp(f.PausePerHour), func() {
			if w.ended {
				return
			}
			w.Pauses++
			d := int64(50*time.Millisecond) + w.frng.Int64N(int64(2*time.Second))
			if long, f := w.frng.IntN(2) == 0, w.frng.Float64(); long {
				d = int64(float64(w.cfg.TTL) * (1 + 2*f)) // past the TTL
			}
			if w.frng.IntN(2) == 0 {
				n.pauseOnRead = d // right after the next clock read
			} else {
				n.pausedUntil = max(n.pausedUntil, s.now+d)
			}
			pause()
		})
	}
	step = func() {
		s.At(s.now+w.exp(f.StepPerHour), func() {
			if w.ended {
				return
			}
			w.Steps++
			d := int64(100*time.Millisecond) + w.frng.Int64N(int64(30*time.Second))
			if w.frng.IntN(2) == 0 {
				n.step(d)
			} else {
				n.step(-d)
				if restart := w.frng.IntN(2) == 0; restart && n.deadFrom == 0 && n.client != nil {
					w.Kills++
					n.crash(0) // restarted on the clock stepped back
				}
			}
			step()
		})
	}
	kill()
	pause()
	step()
}

// crash kills the node's process now and boots a new one after delay.
func (n *leaseNode) crash(delay int64) {
	w, s := n.w, n.w.sim
	if n.starting {
		n.account(&w.Acct.Acquiring)
	} else {
		n.account(&w.Acct.OK) // the last interval: unknown, counted as up
	}
	s.Kill(n.Node)
	delete(w.alive, n.owner)
	n.deadFrom = s.now
	n.restart = false
	n.pausedUntil, n.pauseOnRead = 0, 0
	if n.gen != nil {
		n.gen.Close() // the in-process guard only; the process is gone
	}
	n.gen, n.sess = nil, nil
	s.At(s.now+delay, n.boot)
}

// scheduleClones starts, every few simulated minutes, a second process on the
// journal of a running node (SharedJournal).
func (w *LeaseWorld) scheduleClones() {
	s := w.sim
	var clone func()
	clone = func() {
		s.At(s.now+w.exp(20), func() {
			if w.ended {
				return
			}
			n := w.nodes[w.frng.IntN(len(w.nodes))]
			if n.journal != nil && n.client != nil && n.deadFrom == 0 && !n.starting {
				c := &leaseNode{Node: newNode(s, len(w.nodes)+n.ID, n.ppm, n.wallOff), w: w, group: n.group, journal: n.journal, inc: 100 + n.inc}
				c.fixedID = n.ID + 1
				w.nodes = append(w.nodes, c)
				c.boot()
			}
			clone()
		})
	}
	clone()
}

func (w *LeaseWorld) scheduleStoreFaults() {
	s, f := w.sim, w.cfg.Faults
	var outage, slow func()
	outage = func() {
		s.At(s.now+w.exp(f.OutagePerHour), func() {
			if w.ended {
				return
			}
			w.Outages++
			d := int64(w.frng.ExpFloat64() * float64(3*time.Second))
			if long, extra := w.frng.IntN(5) == 0, w.frng.Int64N(int64(w.cfg.TTL+w.cfg.TTL/2)); long {
				d = int64(10*time.Second) + extra // up to past the budget and the TTL
			}
			if f.MaxOutage > 0 {
				d = min(d, int64(f.MaxOutage))
			}
			w.net.downUntil = max(w.net.downUntil, s.now+d)
			outage()
		})
	}
	slow = func() {
		s.At(s.now+w.exp(f.SlowPerHour), func() {
			if w.ended {
				return
			}
			w.Slows++
			w.net.slowUntil = max(w.net.slowUntil, s.now+int64(time.Second)+w.frng.Int64N(int64(20*time.Second)))
			w.net.slowMin = int64(200 * time.Millisecond)
			w.net.slowMax = int64(4 * time.Second)
			slow()
		})
	}
	outage()
	slow()
}

// Run runs the simulation to its end and returns its report.
func (w *LeaseWorld) Run() *Report {
	start := time.Now()
	w.sim.Run(simStart + int64(w.cfg.Duration))
	for _, n := range w.nodes {
		switch {
		case n.deadFrom != 0:
			w.Acct.Down += w.sim.now - n.deadFrom
		case n.starting:
			n.account(&w.Acct.Acquiring)
		case n.client != nil:
			n.account(&w.Acct.OK)
		}
	}
	rep := w.report(time.Since(start))
	w.teardown()
	return rep
}

// teardown ends every node's goroutines and generator, so that runs in one process
// leave nothing behind.
func (w *LeaseWorld) teardown() {
	w.ended = true
	for _, n := range w.nodes {
		n.pausedUntil = 0
		w.sim.Kill(n.Node)
	}
	w.sim.Run(w.sim.now)
	for _, n := range w.nodes {
		if n.gen != nil {
			n.gen.Close()
		}
	}
}

// Report is the outcome of a run.
type Report struct {
	Config     LeaseConfig
	TraceHash  uint64
	Events     int64
	IDs        int64
	Requests   int64
	Holders    int64
	Resumes    int64
	Kills      int64
	Restarts   int64
	Pauses     int64
	Steps      int64
	Outages    int64
	Slows      int64
	Copies     int64 // journals copied onto new nodes (Clones)
	Restores   int64 // journals restored in place from an earlier copy (Restores)
	Acct       Availability
	Violations []Violation
	ByKind     map[string]int64
	Elapsed    time.Duration
}

func (w *LeaseWorld) report(el time.Duration) *Report {
	return &Report{Config: w.cfg, TraceHash: w.sim.TraceHash(), Events: w.sim.Events, IDs: w.IDs, Requests: w.Requests,
		Holders: w.chk.holders, Resumes: w.Resumes, Kills: w.Kills, Restarts: w.Restarts, Pauses: w.Pauses, Steps: w.Steps, Outages: w.Outages, Slows: w.Slows,
		Copies: w.Copies, Restores: w.Restores, Acct: w.Acct, Violations: w.chk.first, ByKind: w.chk.byKind, Elapsed: el}
}

// Failed reports whether the run found a violation.
func (r *Report) Failed() bool { return len(r.ByKind) > 0 }

// Summary is one line for people.
func (r *Report) Summary() string {
	c := r.Config
	return fmt.Sprintf("seed=%d nodes=%d hours=%.2f budget=%v ttl=%v window=%v ppm=%g: %d IDs, %d holders, %d resumes, %d kills, %d pauses, %d steps, %d outages, %d slow spells, %d journals copied, %d restored; unavailable %.4f%% (acquiring %.4f%%, fenced %.4f%%, behind %.4f%%); violations %v; %d events in %v; trace %016x",
		c.Seed, c.Nodes, c.Duration.Hours(), c.Budget, c.TTL, c.Window, c.PPM, r.IDs, r.Holders, r.Resumes, r.Kills, r.Pauses, r.Steps, r.Outages, r.Slows, r.Copies, r.Restores,
		100*r.Acct.Unavailable(), 100*r.Acct.frac(r.Acct.Acquiring), 100*r.Acct.frac(r.Acct.Fenced), 100*r.Acct.frac(r.Acct.Behind),
		r.ByKind, r.Events, r.Elapsed.Round(time.Millisecond), r.TraceHash)
}

func (a Availability) frac(x int64) float64 {
	up := a.OK + a.Acquiring + a.Fenced + a.Behind
	if up == 0 {
		return 0
	}
	return float64(x) / float64(up)
}
