package redisgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/internal/redisconn"
	"github.com/flurryid/flurry/internal/retry"
	"github.com/flurryid/flurry/layout"
)

// DefaultBehindWait is the longest a call waits, in all, for Redis's clock to
// catch up with the last issued tick when Options.BehindWait is zero. It is the
// same as snowflake's default WaitThreshold.
const DefaultBehindWait = 10 * time.Millisecond

// DefaultPlainWindow is Options.PlainWindow's default for layouts whose unit is
// shorter, and the longest window New accepts for them: long enough for several
// round trips under load (a script call's answer that comes after the window
// confirms nothing; with 1 ms, 64 goroutines fell back to the script for most
// IDs), and short enough that a failover to a lagging replica is slower. The
// plain path cannot tell which server answered, so that is its assumption: a
// failover faster than the window can issue a slot twice. One has to notice the
// old primary is gone (Sentinel's down-after-milliseconds, a VIP's
// advertisements) or be driven by hand; a scripted kill, promotion and VIP move
// took 100 ms, and a window of 500 ms then issued hundreds of slots twice.
const DefaultPlainWindow = 10 * time.Millisecond

// DefaultNamespace is the namespace of Options with an empty Namespace.
const DefaultNamespace = "flurry"

// maxNodeBits is the widest node field the script can carry exactly: Lua numbers
// are doubles, exact below 2^53.
const maxNodeBits = 52

// maxNodeChanges is how many times one call reads the node key again, after the
// script found it changed, before it gives up.
const maxNodeChanges = 5

// Options configures a Generator. Client (or URL) and Layout are required; every
// other zero field means its documented default.
type Options struct {
	// Client is the Redis connection: a *redis.Client, a *redis.ClusterClient or a
	// failover client. The Generator does not close it. Clients should set
	// ContextTimeoutEnabled, so that a context's deadline bounds each call.
	Client redis.UniversalClient
	// URL is used when Client is nil:
	//
	//	redis://[user:password@]host:port[/db][?dial_timeout=1s&...]   rediss:// for TLS
	//	redis+sentinel://[[user]:password@]host:26379[,host:26379...]/master[/db][?...]
	//
	// The Sentinel form finds the primary through the sentinels and follows it
	// when they fail over (go-redis's failover client). The query keys are
	// go-redis's (redis.ParseURL, redis.ParseFailoverURL; see
	// internal/redisconn). The Generator makes the client, with
	// ContextTimeoutEnabled, and closes it in Close. New gives the first answer
	// the client's dial timeout (5s unless dial_timeout says otherwise); each call
	// after that is bounded by its context's deadline or, without one, by
	// go-redis's read and write timeouts (3s each) per attempt. Setting both Client
	// and URL is an error.
	URL string
	// Namespace names the ID space: its keys are {Namespace}:node and
	// {Namespace}:last, in one Redis Cluster slot. Empty means DefaultNamespace. It
	// may not contain { or }, spaces or control characters, and is at most 200 bytes.
	Namespace string
	// Layout is the bit layout of the IDs. Required. Every generator of a namespace
	// must use the same layout: the same fields, names, unit and epoch (checked in
	// Redis: ErrLayoutMismatch).
	Layout *layout.Layout
	// BehindWait is the longest one call waits, in all, for Redis TIME to reach the
	// last issued tick before it returns a *ClockBehindError. Zero means
	// DefaultBehindWait (10 ms); negative means fail at once.
	BehindWait time.Duration
	// PlainWindow is how long after a script call that confirmed the node values
	// and the tick Next may take IDs with one plain HINCRBY of the node values'
	// counter instead of the script (about 3x cheaper in Redis, as unique; see
	// Next and docs/redisgen.md, "The plain path"). It is also how far such IDs
	// may lag behind Redis TIME, and how soon after a failover a reply from the
	// new primary is no longer taken.
	//
	// The plain path assumes that a failover to an asynchronous replica, from the
	// old primary's last answer to the new primary's first, takes longer than the
	// window: a replica promoted sooner may hold an older counter, and its slots
	// within the window are slots the old primary issued. The script needs the
	// failover to take longer than one tick (its new primary's TIME must be past
	// the old one's last tick), so a window of the unit adds nothing to that; the
	// default adds 10 ms for layouts of a shorter unit (see DefaultPlainWindow).
	// Zero means DefaultPlainWindow or the layout's unit, whichever is longer, and
	// that is also the longest window New accepts; negative turns the plain path
	// off, so that every call runs the script and the node check is atomic with
	// each ID (as when replicas are promoted by a script that can be faster).
	// Layouts of the hash format never take the plain path.
	PlainWindow time.Duration
	// Clock measures the plain path's window, on this process's monotonic clock.
	// Nil means clock.NewSystem(). Tests pass a clock.Manual.
	Clock clock.Clock
	// Logger receives warnings: a layout near the end of its lifetime (once, from
	// New), the first clock-behind refusal after an ID was issued (not every
	// refused call), and each node key written back (RestoreNode). Nil means no
	// logging.
	Logger *slog.Logger
	// RestoreNode has the Generator write the node values it was last given by
	// SetNode back into Redis when it finds the namespace's node key gone (a
	// Redis restarted without persistence, a replica promoted before it had
	// synced, a FLUSHALL), instead of refusing every call with ErrNodeUnset
	// until someone sets it again. The values go back only while the key does
	// not exist (never over values someone else set), atomically with a floor in
	// the last key: no ID starts below the tick after the last one this
	// Generator issued, nor below this machine's clock, nor below Redis TIME, so
	// that the IDs issued before the loss are not issued again unless the Redis
	// that issued them had a clock ahead of all three (docs/redisgen.md,
	// "Persistence"). Leave it off where deleting the node key is how a Redis is
	// taken out of a fleet: a Generator still connected to it would put the
	// value back.
	RestoreNode bool
}

// Generator issues IDs built inside one Redis (or one Redis Cluster slot) by a Lua
// script, or by one HINCRBY within a tick of a script call (Next). It holds no
// lock and no state but the node values it read and the last ticks a script
// confirmed, so it is safe for concurrent use, and any number of Generators, in
// any number of processes, may share a namespace.
type Generator struct {
	client     redis.UniversalClient
	owned      bool
	ns         string
	keys       []string     // node key, last key
	params     scriptParams // the layout's numbers, baked into the scripts
	l          *layout.Layout
	maxBatch   int64
	nodeNames  []string
	behindWait time.Duration
	log        *slog.Logger
	cur        atomic.Pointer[issuer] // nil until the node values are read
	closed     atomic.Bool
	behind     atomic.Bool                       // a clock-behind refusal was logged; cleared by the next issue
	where      string                            // names the server in messages, without a password
	clk        clock.Clock                       // the plain path's window
	setNode    *redis.Script                     // SetNode's script (counter format)
	window     int64                             // ns: how long after a script's send a plain reply is taken; 0: never
	restoreOn  bool                              // Options.RestoreNode
	restoreNV  atomic.Pointer[layout.NodeValues] // the last values SetNode wrote; nil before
	restore    *redis.Script                     // writes them back with a floor (restoreScript)
	lastTick   atomic.Int64                      // the latest tick a script call of this Generator issued in; -1: none
}

// issuer holds the scripts made for one reading of the node hash: they check that
// the hash still holds those values (or answer -1) and the IDs are composed here
// from them.
type issuer struct {
	mask     flurry.ID     // the node values' bits
	one      *redis.Script // Next's script
	many     *redis.Script // NextN's
	oneSha   []any         // EVALSHA of one, with its keys: built once, sent as is
	oneEval  []any         // EVAL of one, after NOSCRIPT
	raw      []string      // the node values as Redis holds them
	manyKeys []string

	// The plain path (Next): nil plain means it is off (a negative PlainWindow, or a
	// layout of the hash format).
	plain []any                    // HINCRBY {ns}:last <the node values' counter field> 1
	valid atomic.Pointer[validity] // the last two confirmations; nil until the first
	mu    sync.Mutex               // guards fl; never held across I/O
	// plainOff is the time on Generator.clk until which Next takes no plain
	// path with this issuer (see foreign); warned says foreign logged.
	plainOff atomic.Int64
	warned   atomic.Bool
	fl       *flight // the script call other goroutines wait for, if any
	// inPlain counts the plain calls in flight: with none, the window is
	// renewed later (renewLead).
	inPlain atomic.Int64

	// Plain calls share: while one is in flight, callers that arrive meanwhile
	// wait for it to end and then take one slot each from one HINCRBY by their
	// number (see incr). bmu guards sending, idle and open, and a share's n
	// and full until it is sent; never held across I/O.
	bmu      sync.Mutex
	sending  int           // plain HINCRBYs in flight
	idle     chan struct{} // closed when sending drops to zero; made by open's leader
	open     *share        // the callers waiting to send together, if any
	maxShare int64         // the most slots one HINCRBY takes (at most a tick's)
	plainArg string        // is.plain's field, for HINCRBYs by more than one
}

// share is one HINCRBY for several plain calls: n callers (frozen when it is
// sent) take the n slots it answers, the first caller (its leader, who sends
// it) the lowest.
type share struct {
	n          int64
	full       chan struct{} // made by a caller that found n at maxShare; closed when sent
	done       chan struct{} // closed when the fields below are set
	x          int64         // HINCRBY's answer: the highest slot taken, plus one
	err        error
	sent, recv int64 // when the call was sent and answered, on Generator.clk
}

// maxShare is the most callers one plain HINCRBY serves.
const maxShare = 128

// incr takes one slot from is's counter by a plain HINCRBY, shared with the
// callers that wait for it meanwhile. It answers the slot and when the HINCRBY
// was sent and answered (on g.clk), or failed: a shared call failed (the
// caller runs the script, which reports the error in its own context), or err:
// this caller's own call failed.
//
// Sharing keeps a Generator's round trip short however many goroutines call
// Next: with one HINCRBY per goroutine in flight, 64 goroutines' round trip was
// 64 calls long, on a busy machine as long as the window, and each late reply
// ran the script, several plain calls' work, which made the round trips longer
// still. A shared HINCRBY by n is, to the counter, n increments of one in a row;
// each caller checks its slot with that call's own send and answer times, as a
// call of its own would be checked.
func (g *Generator) incr(ctx context.Context, is *issuer) (slot, sent, recv int64, failed bool, err error) {
	is.bmu.Lock()
	for is.open != nil && is.open.n >= is.maxShare {
		// The next share is full: wait until it is sent and join the one after.
		// Nobody sends a call of their own while a share waits, so that the
		// calls in flight, which it waits for, end.
		b := is.open
		if b.full == nil {
			b.full = make(chan struct{})
		}
		full := b.full
		is.bmu.Unlock()
		select {
		case <-full:
		case <-ctx.Done():
			return 0, 0, 0, false, ctx.Err()
		}
		is.bmu.Lock()
	}
	if b := is.open; b != nil {
		// A call is in flight and others wait to send the next: join them.
		i := b.n
		b.n++
		is.bmu.Unlock()
		select {
		case <-b.done:
		case <-ctx.Done():
			return 0, 0, 0, false, ctx.Err() // the slot is burned
		}
		if b.err != nil {
			return 0, 0, 0, true, nil
		}
		return b.x - b.n + i, b.sent, b.recv, false, nil
	}
	if is.sending == 0 {
		// None in flight: this caller's own call.
		is.sending++
		is.bmu.Unlock()
		sent = g.clk.Now()
		x, err := g.client.Do(ctx, is.plain...).Int64()
		recv = g.clk.Now()
		is.plainDone()
		return x - 1, sent, recv, false, err
	}
	// A call is in flight: lead the next, sent when the calls in flight end.
	b := &share{n: 1, done: make(chan struct{})}
	is.open = b
	if is.idle == nil {
		is.idle = make(chan struct{})
	}
	idle := is.idle
	is.bmu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done(): // send anyway: the call fails at once, the others run the script
	}
	is.bmu.Lock()
	is.open = nil
	n := b.n
	if b.full != nil {
		close(b.full)
	}
	is.sending++
	is.bmu.Unlock()
	args := is.plain
	if n > 1 {
		args = []any{args[0], args[1], is.plainArg, strconv.FormatInt(n, 10)}
	}
	b.sent = g.clk.Now()
	b.x, b.err = g.client.Do(ctx, args...).Int64()
	b.recv = g.clk.Now()
	close(b.done)
	is.plainDone()
	return b.x - n, b.sent, b.recv, false, b.err
}

// plainDone ends a plain call and wakes the share waiting for the calls in
// flight to end.
func (is *issuer) plainDone() {
	is.bmu.Lock()
	is.sending--
	if is.sending == 0 && is.idle != nil {
		close(is.idle)
		is.idle = nil
	}
	is.bmu.Unlock()
}

// confirmation says that a script call of this issuer, sent at sent and answered
// at recv (on Generator.clk), issued a slot of tick: that Redis held the node
// values then, and its counter for them stood in tick.
type confirmation struct{ tick, sent, recv int64 }

// covers reports whether a plain call sent at sent and answered at recv may take
// a slot of tick: the confirmation is of that tick, and both calls were sent and
// answered within one window. docs/redisgen.md ("The plain path") says why this
// is enough.
func (c confirmation) covers(tick, sent, recv, window int64) bool {
	return tick == c.tick && max(recv, c.recv)-min(sent, c.sent) <= window
}

// validity holds the last confirmation and the one before it, so that plain
// calls in flight while a script moves the counter to a new tick are still
// taken.
type validity struct{ cur, prev confirmation }

func (v *validity) covers(tick, sent, recv, window int64) bool {
	return v.cur.covers(tick, sent, recv, window) || v.prev.covers(tick, sent, recv, window)
}

// flight is a script call that goroutines whose plain slot lies in the next tick
// wait for: done is closed when it has ended, its confirmation (if any) recorded.
type flight struct{ done chan struct{} }

// confirm records a confirmation, unless a later one is already there.
func (is *issuer) confirm(c confirmation) {
	for {
		old := is.valid.Load()
		v := &validity{cur: c, prev: confirmation{tick: -1}}
		if old != nil {
			if old.cur.sent >= c.sent {
				return
			}
			v.prev = old.cur
			if old.cur.tick == c.tick {
				v.prev = old.prev
			}
		}
		if is.valid.CompareAndSwap(old, v) {
			return
		}
	}
}

// startFlight returns the script call in flight, or makes this caller's the one
// (mine): it must then call endFlight when its script call has ended.
func (is *issuer) startFlight() (f *flight, mine bool) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.fl != nil {
		return is.fl, false
	}
	is.fl = &flight{done: make(chan struct{})}
	return is.fl, true
}

func (is *issuer) endFlight(f *flight) {
	is.mu.Lock()
	is.fl = nil
	is.mu.Unlock()
	close(f.done)
}

// New checks opts, connects (for a URL) and checks that Redis answers. It fails:
//   - with no Client and no URL, or both, or a malformed URL (the error never shows
//     the password);
//   - with no Layout, a layout with a node field wider than 52 bits, or one whose
//     time field has run out (ErrExhausted);
//   - with a malformed Namespace;
//   - when Redis does not answer.
//
// New does not read the node key: a Generator may set it with SetNode first. The
// first call reads it and loads the scripts made for its values (EVALSHA, then
// EVAL on NOSCRIPT, on whichever shard holds the namespace).
func New(ctx context.Context, opts Options) (*Generator, error) {
	l := opts.Layout
	if l == nil {
		return nil, errors.New("redisgen: Options.Layout is nil; pass a layout, e.g. layout.Parse(\"twitter\")")
	}
	if l.Exhausted(time.Now()) {
		return nil, fmt.Errorf("%w: layout %s ran out on %s; use a layout with a later epoch or a longer time field, in a new namespace",
			ErrExhausted, l, l.Lifetime().Format(time.RFC3339))
	}
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	p, err := paramsOf(l)
	if err != nil {
		return nil, err
	}
	g := &Generator{
		ns:         ns,
		keys:       []string{nodeKey(ns), lastKey(ns)},
		params:     p,
		l:          l,
		maxBatch:   p.slots(),
		behindWait: opts.BehindWait,
		log:        opts.Logger,
		restoreOn:  opts.RestoreNode && len(p.nodes) > 0,
	}
	g.lastTick.Store(-1)
	if g.restoreOn {
		g.restore = redis.NewScript(restoreScript(p))
	}
	if g.behindWait == 0 {
		g.behindWait = DefaultBehindWait
	}
	g.clk = opts.Clock
	if g.clk == nil {
		g.clk = clock.NewSystem()
	}
	if longest := max(DefaultPlainWindow, l.Unit()); opts.PlainWindow > longest {
		return nil, fmt.Errorf("redisgen: Options.PlainWindow %v is longer than %v: the plain path assumes that a failover to a lagging replica takes longer than the window, and a scripted promotion with a VIP move takes about 100 ms; leave it zero for %v, or make it negative to turn the plain path off",
			opts.PlainWindow, longest, longest)
	}
	if p.counter() && opts.PlainWindow >= 0 {
		g.window = int64(opts.PlainWindow)
		if g.window == 0 {
			g.window = int64(max(DefaultPlainWindow, l.Unit()))
		}
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, f := range p.nodes {
		g.nodeNames = append(g.nodeNames, f.name)
	}
	if p.counter() {
		g.setNode = redis.NewScript(setNodeScript(p))
	}

	call, dial := redisconn.ClientCall(opts.Client, redisconn.Settings{}), time.Duration(0)
	g.where = "Redis"
	switch {
	case opts.Client != nil && opts.URL != "":
		return nil, errors.New("redisgen: both Options.Client and Options.URL are set; give one")
	case opts.Client != nil:
		g.client = opts.Client
	case opts.URL != "":
		c, err := parseURL(opts.URL)
		if err != nil {
			return nil, err
		}
		g.client, g.owned, g.where = c.NewClient(), true, c.Redacted
		call, dial = c.Call(redisconn.Settings{}), c.DialTimeout()
	default:
		return nil, errors.New("redisgen: neither Options.Client nor Options.URL is set; give a client or a URL such as redis://127.0.0.1:6379/0")
	}
	if err := g.connect(ctx, call, dial); err != nil {
		g.closeClient()
		return nil, fmt.Errorf("redisgen: %w", err)
	}
	if left := time.Until(l.Lifetime()); left < 365*24*time.Hour {
		g.log.Warn("redisgen: the layout's time field runs out soon; plan a move to a new layout and namespace",
			"namespace", ns, "layout", l.String(), "end", l.Lifetime(), "left", layout.FormatLeft(left))
	}
	return g, nil
}

// connect checks that Redis answers, within dial or ctx's
// deadline, whichever comes first: a Redis that accepts connections and never
// answers would otherwise hold New until go-redis's retries run out.
func (g *Generator) connect(ctx context.Context, call bound.Call, dial time.Duration) (err error) {
	ctx, end := call.Dial(ctx, dial)
	defer end(&err)
	if err := g.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%s does not answer: %w", g.where, err)
	}
	return nil
}

func (g *Generator) closeClient() {
	if g.owned {
		g.client.Close()
	}
}

// checkNamespace refuses names that would break the hash tag or the key names.
func checkNamespace(ns string) error {
	if len(ns) > 200 {
		return fmt.Errorf("redisgen: namespace %q… is %d bytes; at most 200", ns[:40], len(ns))
	}
	for _, r := range ns {
		if r == '{' || r == '}' || r <= ' ' || r == 0x7f {
			return fmt.Errorf("redisgen: namespace %q contains %q; use letters, digits and punctuation other than { and }", ns, r)
		}
	}
	return nil
}

func nodeKey(ns string) string { return "{" + ns + "}:node" }
func lastKey(ns string) string { return "{" + ns + "}:last" }

// parseURL reads Options.URL; see redisconn.ParseClientURL.
func parseURL(rawURL string) (redisconn.Config, error) {
	c, err := redisconn.ParseClientURL(rawURL)
	if err != nil {
		return c, fmt.Errorf("redisgen: %w", err)
	}
	return c, nil
}

// Namespace returns the generator's namespace.
func (g *Generator) Namespace() string { return g.ns }

// Layout returns the generator's layout; its Decompose takes the IDs apart.
func (g *Generator) Layout() *layout.Layout { return g.l }

// Next returns a new ID. See NextN for the waits and errors.
//
// The plain path: within Options.PlainWindow after this Generator sent a script
// call that issued an ID, Next sends one HINCRBY of the counter of
// its node values instead of the script, and takes the slot it answers when the
// slot lies in a tick a script confirmed and the reply came within that tick's
// window; anything else (another tick, a late reply, an error) falls back to the
// script. The counter only grows, so the slot is this call's alone; the window
// keeps such IDs within a tick of what the script would have issued, and the
// counter's field is named after the node values, so a Redis that does not hold
// them has no such counter and answers a slot near the epoch, which is refused.
// docs/redisgen.md ("The plain path") has the argument. One goroutine runs the
// script a quarter to half of a window early (renewLead), so that concurrent
// callers do not all fall back at once. Callers that arrive while a plain call
// is in flight wait for it and then share one HINCRBY by their number, each
// taking one of its slots (incr): with many goroutines a Generator keeps one or
// two plain calls in flight instead of one per goroutine, so that its round
// trips stay well inside the window. A negative Options.PlainWindow turns the
// plain path off.
func (g *Generator) Next(ctx context.Context) (flurry.ID, error) {
	is := g.cur.Load()
	var mine *flight
	if is != nil && is.plain != nil && !g.closed.Load() {
		id, ok, f, err := g.nextPlain(ctx, is)
		if ok || err != nil {
			return id, err
		}
		mine = f
	}
	var one [1]flurry.ID
	_, err := g.NextN(ctx, one[:])
	if mine != nil {
		is.endFlight(mine)
	}
	return one[0], err
}

// foreignOff is how long an issuer takes no plain path after a foreign reply:
// long enough that plain calls of one Generator that reach a stale counter move
// it by at most its goroutines a minute, far slower than a new holder's ticks
// move away from it.
const foreignOff = time.Minute

// foreign handles a plain reply from a counter that cannot be the confirmed one:
// poisoned (below zero), never used here (near the epoch), or below the tick this
// Generator had confirmed before it sent the call (that script ran before the
// call was sent, and the confirmed counter only grows, however late the reply
// comes). The call reached a Redis that no longer holds, or never held, the
// node values (a moved VIP or DNS name, a pool with connections to two servers),
// or a counter that went back (a failover to a lagging replica). The issuer runs
// the script for every ID for foreignOff, so that such calls cannot go on moving
// that counter, and says so once.
func (g *Generator) foreign(is *issuer, now, slot int64) {
	is.plainOff.Store(now + int64(foreignOff))
	if !is.warned.Swap(true) {
		g.log.Warn("redisgen: a plain HINCRBY reached a counter that is not this Generator's (another Redis, or a stale or poisoned counter); Next runs the script for every ID for a while",
			"namespace", g.ns, "node", strings.Join(is.raw, ","), "slot", slot, "off_for", foreignOff)
	}
}

// renewLead is how long before the end of c's window one goroutine runs the
// script to confirm the next tick. While other goroutines have plain calls in
// flight, half the window: their replies must come back within c's window unless
// the renewal's confirmation is back first. A lone caller has only its own calls
// to think of: four times c's round trip, so that the new confirmation is
// usually back before the window ends, between a quarter and half of the window.
// Each renewal is a script call, several times a plain call's cost in Redis and
// in its round trip, so one goroutine's Next stays near a plain call's rate by
// renewing no earlier than it needs to: on an idle machine three quarters into
// the window, where renewing at half of it ran half as many script calls again.
func renewLead(c confirmation, window, inPlain int64) int64 {
	if inPlain > 0 {
		return window / 2
	}
	return min(max(4*(c.recv-c.sent), window/4), window/2)
}

// nextPlain is Next's plain path: ok reports whether it issued. When it did not,
// mine is the flight the caller must end after its script call, if the caller's
// is the script call that confirms a tick for the others.
func (g *Generator) nextPlain(ctx context.Context, is *issuer) (id flurry.ID, ok bool, mine *flight, err error) {
	wait := func(f *flight) error {
		select {
		case <-f.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("redisgen: namespace %q: %w", g.ns, ctx.Err())
		}
	}
	sent := g.clk.Now()
	v := is.valid.Load()
	if v == nil || sent < is.plainOff.Load() {
		return 0, false, nil, nil
	}
	if age := sent - v.cur.sent; age >= g.window-renewLead(v.cur, g.window, is.inPlain.Load()) {
		// The end of the window is near: one goroutine runs the script, the
		// others go on with plain calls meanwhile, or, past the window, wait
		// for it rather than all run the script at once.
		f, m := is.startFlight()
		if m {
			return 0, false, f, nil
		}
		if age >= g.window {
			if err := wait(f); err != nil {
				return 0, false, nil, err
			}
			sent = g.clk.Now()
			if v = is.valid.Load(); sent-v.cur.sent >= g.window {
				return 0, false, nil, nil
			}
		}
	}
	// The confirmed counter stood at least in this tick before the call was
	// sent: a slot below it is not that counter's.
	least := v.cur.tick
	is.inPlain.Add(1)
	slot, sent, recv, failed, err := g.incr(ctx, is)
	is.inPlain.Add(-1)
	if failed {
		return 0, false, nil, nil
	}
	if err != nil {
		if _, ok := errors.AsType[redis.Error](err); ok {
			// Redis answered, with an error (a last key that is not a
			// hash, ...): the script says what is wrong in the words of
			// every other call.
			return 0, false, nil, nil
		}
		return 0, false, nil, fmt.Errorf("redisgen: namespace %q: %w", g.ns, err)
	}
	p := &g.params
	tick := slot / p.slots()
	v = is.valid.Load() // never nil again once set
	if slot < 0 || tick < least {
		g.foreign(is, recv, slot)
		return 0, false, nil, nil
	}
	if !v.covers(tick, sent, recv, g.window) {
		if tick <= v.cur.tick {
			return 0, false, nil, nil // a late reply
		}
		// The counter moved to a later tick (a script call, this Generator's
		// or another's, or the tick used up): wait for one script call of this
		// issuer to confirm the tick it stands in now, or be the one that
		// makes it.
		f, m := is.startFlight()
		if m {
			return 0, false, f, nil
		}
		if err := wait(f); err != nil {
			return 0, false, nil, err
		}
		if v = is.valid.Load(); !v.covers(tick, sent, recv, g.window) {
			return 0, false, nil, nil
		}
	}
	if g.behind.Load() {
		g.behind.Store(false)
	}
	return flurry.ID(tick)<<p.timeShift | is.mask | flurry.ID(slot%p.slots())<<p.seqShift, true, nil, nil
}

// NextN fills the start of dst with new IDs of one tick, in increasing order, with
// one script run, and returns how many it wrote: at least one (when dst is not
// empty) and at most what is left of the current tick's sequence values in Redis.
//
// When the tick's sequence values are used up, NextN sleeps until Redis's next
// tick begins (the script says how long) and runs the script again; it never
// wraps the sequence and never spins. When Redis TIME stands behind the last
// issued tick it sleeps too, as long as the waits stay within BehindWait in all;
// past that it returns a *ClockBehindError. A cancelled ctx ends a sleep with
// ctx.Err(). Other errors wrap ErrNodeUnset, ErrNodeInvalid, ErrExhausted,
// ErrLayoutMismatch, ErrBeforeEpoch, ErrClosed, or Redis's error. On an error
// nothing was written to dst.
func (g *Generator) NextN(ctx context.Context, dst []flurry.ID) (int, error) {
	if g.closed.Load() {
		return 0, ErrClosed
	}
	if len(dst) == 0 {
		return 0, nil
	}
	n := min(int64(len(dst)), g.maxBatch)
	is := g.cur.Load()
	var waited time.Duration // behind the last tick, in all
	changes := 0             // node values read again in this call
	for {
		if is == nil {
			var err error
			if is, err = g.readNode(ctx); err != nil {
				return 0, err
			}
		}
		sent := g.clk.Now()
		v, err := g.run(ctx, is, n)
		if err != nil {
			// An error from Redis may come from a node key that is no longer
			// a hash: the next call reads the node key again and says so.
			if _, ok := errors.AsType[redis.Error](err); ok {
				g.cur.CompareAndSwap(is, nil)
			}
			return 0, fmt.Errorf("redisgen: namespace %q: running the script: %w", g.ns, err)
		}
		r, err := parseReply(v, &g.params, n)
		if err != nil {
			return 0, fmt.Errorf("redisgen: namespace %q: %w", g.ns, err)
		}
		switch r.status {
		case statusNodeChanged:
			g.cur.CompareAndSwap(is, nil)
			is = nil
			// Each retry is a read and a script run, not a spin; the bound
			// keeps a node key rewritten without pause from holding a call.
			if changes++; changes > maxNodeChanges {
				return 0, fmt.Errorf("%w: namespace %q: key %s changed %d times during one call; stop whatever keeps rewriting it",
					ErrNodeInvalid, g.ns, g.keys[0], changes)
			}
		case statusIssued:
			if g.behind.Load() {
				g.behind.Store(false)
			}
			// The plain path issues only in ticks confirmed here, so this is
			// the latest tick of every ID this Generator issued (RestoreNode's
			// floor).
			for old := g.lastTick.Load(); r.tick > old && !g.lastTick.CompareAndSwap(old, r.tick); old = g.lastTick.Load() {
			}
			if is.plain != nil {
				is.confirm(confirmation{tick: r.tick, sent: sent, recv: g.clk.Now()})
			}
			p := &g.params
			id := flurry.ID(r.tick)<<p.timeShift | is.mask | flurry.ID(r.seq)<<p.seqShift
			step := flurry.ID(1) << p.seqShift
			for i := range dst[:r.granted] {
				dst[i] = id
				id += step
			}
			return int(r.granted), nil
		case statusFull:
			// The script measured the wait with Redis's clock; this process's
			// clock runs at the same rate, so after it Redis is in the next tick.
			if err := retry.Sleep(ctx, min(max(r.wait, time.Microsecond), g.l.Unit())); err != nil {
				return 0, err
			}
		case statusBehind:
			if r.last == r.tick+1 {
				// The counter stands in the next tick: plain calls
				// (Next) that found the tick used up moved it there. It is
				// a wait for the next tick, as statusFull is; a clock
				// stepped back by less than a tick waits the same way.
				if err := retry.Sleep(ctx, min(max(r.wait, time.Microsecond), g.l.Unit())); err != nil {
					return 0, err
				}
				continue
			}
			if g.behindWait > 0 && waited+r.wait <= g.behindWait {
				waited += r.wait
				if err := retry.Sleep(ctx, r.wait); err != nil {
					return 0, err
				}
				continue
			}
			e := &ClockBehindError{Namespace: g.ns, Gap: r.wait, LastTick: r.last, Tick: r.tick}
			if !g.behind.Swap(true) {
				g.log.Warn("redisgen: Redis clock behind the last issued tick; refusing to issue until it catches up",
					"namespace", g.ns, "gap", r.wait, "last_tick", r.last, "tick", r.tick)
			}
			return 0, e
		case statusExhausted:
			return 0, fmt.Errorf("%w: namespace %q: Redis TIME is in tick %d, past the layout's last tick %d (it ran out on %s); move to a layout with a later epoch or a longer time field, in a new namespace",
				ErrExhausted, g.ns, r.tick, g.params.maxTick, g.l.Lifetime().Format(time.RFC3339))
		case statusLayout:
			return 0, fmt.Errorf("%w: namespace %q issued IDs of layout %s, not of this generator's %s; use a new namespace for a new layout",
				ErrLayoutMismatch, g.ns, strings.TrimSuffix(strings.TrimSuffix(r.raw, markerSuffix), markerSuffixV1), g.l)
		case statusBeforeEpoch:
			return 0, fmt.Errorf("%w: namespace %q: Redis TIME is %v before the epoch %s; fix the Redis server's clock",
				ErrBeforeEpoch, g.ns, r.wait, g.l.Epoch().Format(time.RFC3339Nano))
		}
	}
}

// run runs is's script for n IDs. Next's call is built once and sent as is, so
// a call allocates only what go-redis needs for the command and its reply.
func (g *Generator) run(ctx context.Context, is *issuer, n int64) (any, error) {
	if n > 1 {
		return is.many.Run(ctx, g.client, is.manyKeys, n).Result()
	}
	v, err := g.client.Do(ctx, is.oneSha...).Result()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		v, err = g.client.Do(ctx, is.oneEval...).Result()
	}
	return v, err
}

// readNode reads the node hash, checks its values and makes the issuer for them.
func (g *Generator) readNode(ctx context.Context) (*issuer, error) {
	raw, nv, err := g.node(ctx)
	if errors.Is(err, ErrNodeUnset) && g.restoreOn {
		var restored bool
		if restored, err = g.restoreNode(ctx, err); restored {
			raw, nv, err = g.node(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	mask, err := g.params.codec.NodeMask(nv)
	if err != nil {
		return nil, fmt.Errorf("%w: namespace %q: %w", ErrNodeInvalid, g.ns, err)
	}
	is := &issuer{mask: flurry.ID(mask), raw: raw, manyKeys: g.keys}
	one := issueScript(g.params, raw, true)
	is.one = redis.NewScript(one)
	is.many = redis.NewScript(issueScript(g.params, raw, false))
	is.oneSha = []any{"evalsha", is.one.Hash(), "2", g.keys[0], g.keys[1]}
	is.oneEval = []any{"eval", one, "2", g.keys[0], g.keys[1]}
	if g.window > 0 {
		is.plainArg = g.params.counterField(raw)
		is.plain = []any{"hincrby", g.keys[1], is.plainArg, "1"}
		is.maxShare = min(maxShare, g.params.slots())
	}
	g.cur.Store(is)
	return is, nil
}

// restoreNode writes the values SetNode last wrote back into a node key that
// does not exist, with the floor (see Options.RestoreNode), and reports whether
// it did; unset is the error to return when it cannot.
func (g *Generator) restoreNode(ctx context.Context, unset error) (bool, error) {
	nv := g.restoreNV.Load()
	if nv == nil {
		return false, unset // this Generator never set the values
	}
	// The floor tick: after everything this Generator issued, and not before
	// this machine's clock. The script keeps Redis TIME's own lower bound.
	p := &g.params
	floor := max(g.lastTick.Load()+1, (time.Now().UnixMilli()-p.epoch)/p.unit, 0)
	args := make([]any, 0, len(g.nodeNames)+1)
	for i := range g.nodeNames {
		args = append(args, itoa(nv[i]))
	}
	if p.counter() {
		args = append(args, itoa(floor*p.slots()))
	} else {
		args = append(args, itoa(floor-1))
	}
	n, err := g.restore.Run(ctx, g.client, g.keys, args...).Int64()
	if err != nil {
		return false, fmt.Errorf("redisgen: namespace %q: writing the node value back: %w (and before: %w)", g.ns, err, unset)
	}
	if n == 1 {
		vals := make([]string, len(g.nodeNames))
		for i := range vals {
			vals[i] = itoa(nv[i])
		}
		g.log.Warn("redisgen: the namespace's node key was gone from Redis (restarted without persistence, a replica promoted before it synced, or flushed); wrote this Generator's node value back and issue from the floor tick on",
			"namespace", g.ns, "key", g.keys[0], "node", strings.Join(vals, ","), "floor_tick", floor)
	}
	// 0: another Generator wrote the key meanwhile; read what it holds.
	return true, nil
}

// node reads the node hash: the values as Redis holds them and as numbers. A
// missing field wraps ErrNodeUnset; a value that is not a decimal number of its
// field wraps ErrNodeInvalid.
func (g *Generator) node(ctx context.Context) ([]string, layout.NodeValues, error) {
	var nv layout.NodeValues
	if len(g.nodeNames) == 0 {
		return nil, nv, nil
	}
	vals, err := g.client.HMGet(ctx, g.keys[0], g.nodeNames...).Result()
	if err != nil {
		if redis.HasErrorPrefix(err, "WRONGTYPE") {
			return nil, nv, fmt.Errorf("%w: namespace %q: key %s is not a hash (%v); delete it and set the node value with Generator.SetNode or `flurry redis set-node`",
				ErrNodeInvalid, g.ns, g.keys[0], err)
		}
		return nil, nv, fmt.Errorf("redisgen: namespace %q: reading the node value: %w", g.ns, err)
	}
	raw := make([]string, len(g.nodeNames))
	for i, f := range g.params.nodes {
		s, ok := vals[i].(string)
		if !ok {
			return nil, nv, fmt.Errorf("%w: namespace %q: key %s has no field %q; set this Redis's own node value with Generator.SetNode or `flurry redis set-node` (every Redis of a fleet needs a different one)",
				ErrNodeUnset, g.ns, g.keys[0], f.name)
		}
		v, ok := decimal(s)
		if !ok || v > f.max {
			return nil, nv, fmt.Errorf("%w: namespace %q: key %s field %q holds %q, not a value of the %d-bit field (0 to %d); set it again with Generator.SetNode or `flurry redis set-node`",
				ErrNodeInvalid, g.ns, g.keys[0], f.name, clip(s), bits.Len64(uint64(f.max)), f.max)
		}
		raw[i], nv[i] = s, v
	}
	return raw, nv, nil
}

// decimal reads s as a number of decimal digits only (no sign, no spaces), at most
// 16 of them, as the script before the counter format accepted.
func decimal(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// SetNode stores this Redis's node values in the namespace's node key, one hash
// field per node field of the layout. Every Redis (every primary with its replicas)
// that serves the namespace for one ID space needs values of its own: two with the
// same values issue the same IDs. A value out of its field's range is refused
// (ErrNodeInvalid, naming the range); so is a layout without node fields. Changing
// the values of a Redis that has issued IDs is safe as long as no other Redis of
// the fleet has the new values.
func (g *Generator) SetNode(ctx context.Context, nv layout.NodeValues) error {
	if g.closed.Load() {
		return ErrClosed
	}
	if len(g.nodeNames) == 0 {
		return fmt.Errorf("%w: layout %s has no node field; only one Redis may serve namespace %q", ErrNodeInvalid, g.l, g.ns)
	}
	if err := g.l.CheckNodeValues(nv); err != nil {
		return fmt.Errorf("%w: %w", ErrNodeInvalid, err)
	}
	var err error
	if g.params.counter() {
		// One script: the new values, and the old values' counter poisoned,
		// so that plain calls still sent with them get nothing from it.
		args := make([]any, len(g.nodeNames))
		for i := range g.nodeNames {
			args[i] = itoa(nv[i])
		}
		err = g.setNode.Run(ctx, g.client, g.keys, args...).Err()
	} else {
		vals := make([]any, 0, 2*len(g.nodeNames))
		for i, name := range g.nodeNames {
			vals = append(vals, name, nv[i])
		}
		err = g.client.HSet(ctx, g.keys[0], vals...).Err()
	}
	if err != nil {
		return fmt.Errorf("redisgen: namespace %q: setting the node value: %w", g.ns, err)
	}
	if g.restoreOn {
		g.restoreNV.Store(&nv)
	}
	return nil
}

// Node reads this Redis's node values from the namespace's node key. A missing
// field is an error wrapping ErrNodeUnset; a stored value that is not a value of
// its field wraps ErrNodeInvalid.
func (g *Generator) Node(ctx context.Context) (layout.NodeValues, error) {
	var nv layout.NodeValues
	if g.closed.Load() {
		return nv, ErrClosed
	}
	if len(g.nodeNames) == 0 {
		return nv, nil
	}
	_, nv, err := g.node(ctx)
	if err != nil {
		return nv, err
	}
	if err := g.l.CheckNodeValues(nv); err != nil {
		return nv, fmt.Errorf("%w: namespace %q: %w", ErrNodeInvalid, g.ns, err)
	}
	return nv, nil
}

// Close makes later calls return ErrClosed and closes the client New made from a
// URL; a client given in Options stays open. Close is idempotent.
func (g *Generator) Close() error {
	if g.closed.Swap(true) || !g.owned {
		return nil
	}
	return g.client.Close()
}
