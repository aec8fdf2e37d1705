package indb

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/layout"
)

// Engine names the database that makes the IDs.
type Engine int

// The engines. The zero Engine is none of them.
const (
	// Postgres is PostgreSQL 13 or later.
	Postgres Engine = iota + 1
	// MariaDB is MariaDB 10.6 or later. MySQL 8 has no SEQUENCE objects, the one
	// non-transactional counter a stored function can move forward, and is refused.
	MariaDB
)

// String returns "postgres" or "mariadb".
func (e Engine) String() string {
	switch e {
	case Postgres:
		return "postgres"
	case MariaDB:
		return "mariadb"
	}
	return fmt.Sprintf("Engine(%d)", int(e))
}

// ParseEngine reads "postgres" (or "postgresql", "pg") and "mariadb" (or "mysql").
func ParseEngine(s string) (Engine, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "postgres", "postgresql", "pg":
		return Postgres, nil
	case "mariadb", "mysql":
		return MariaDB, nil
	}
	return 0, fmt.Errorf("indb: engine %q: use postgres or mariadb", s)
}

// DefaultFunction is the function's name when Options.Function is empty.
const DefaultFunction = "flurry_next_id"

// DefaultMaxWait is Options.MaxWait's default for layouts whose unit is shorter
// than half of it: how long one call may wait for the clock to reach its slot's
// tick, in all.
const DefaultMaxWait = time.Second

// StateTable is the table, in the function's schema or database, where the layout,
// the node value, its lease and the database's identity are recorded, one row per
// function.
const StateTable = "flurry_sql_state"

// Target is a column that takes the function's IDs: on PostgreSQL its DEFAULT is
// set to the function, on MariaDB a BEFORE INSERT trigger fills it when a row
// leaves it NULL or 0.
type Target struct {
	Table  string
	Column string
}

// String returns "table.column".
func (t Target) String() string { return t.Table + "." + t.Column }

// LeaseInfo is the node value's lease, recorded in the state table so that
// Uninstall can release it.
type LeaseInfo struct {
	// Store names the lease store for people (a URL without its password), or
	// SelfStore when the store is the database itself.
	Store string
	Scope string
	Value int64
	Owner string
	Token string
}

// SelfStore is LeaseInfo.Store when the node value is leased from a store in the
// database the function is installed in.
const SelfStore = "this database"

// Options says what Emit writes. Engine and Layout are required; every other zero
// field means its documented default.
type Options struct {
	Engine Engine
	// Layout is the IDs' bit layout.
	Layout *layout.Layout
	// Node holds the node fields' values, baked into the function.
	Node layout.NodeValues
	// Function is the function's name: a lower-case letter, then lower-case letters,
	// digits or _, at most 40 characters. Empty means DefaultFunction. Its other
	// objects are named after it (PostgreSQL: the counter <name>_ctr and the slow
	// path <name>_slow(); MariaDB: the sequence <name>_seq, the tables
	// <name>_tick and <name>_counter, the new tick's claim <name>_claim() and the
	// slow path <name>_slow()).
	Function string
	// Schema is the PostgreSQL schema every object is made in. Empty means
	// "public". MariaDB makes the objects in the connection's database.
	Schema string
	// Floor is a high-water mark in Unix milliseconds (lease.Lease.Mark): the first
	// ID's tick starts after it. Zero means none.
	Floor int64
	// Until is when the function stops issuing: the end of its node value's lease.
	// Zero means the end of the layout's time field.
	Until time.Time
	// MaxWait is how long one call may wait, in all, for the database clock to
	// reach its slot's tick (the tick's sequence values were used up, or the clock
	// is behind the last issued tick) before it fails naming the gap. Zero means
	// DefaultMaxWait, or two units of the layout if that is longer; negative means
	// fail at once. At most a minute.
	MaxWait time.Duration
	// Targets are columns that take the IDs (see Target).
	Targets []Target
	// Grants names PostgreSQL roles that may call the function: the function runs
	// with its caller's privileges (a SECURITY DEFINER function would have to fix
	// its search_path, which costs about half again per call and cannot be
	// inlined), so each role needs SELECT on the state table and USAGE, SELECT and
	// UPDATE on the counter sequence. Owners and superusers need none. MariaDB's function and triggers
	// run with their definer's privileges, so callers need only EXECUTE.
	Grants []string
	// Lease is recorded in the state table. Zero means none: the node values were
	// given by hand.
	Lease LeaseInfo
	// TestClock adds a settable offset to the database clock, for tests that step
	// the clock back: the PostgreSQL setting flurry.test_clock_offset_ms or the
	// MariaDB user variable @flurry_test_clock_offset_ms, in milliseconds, of the
	// calling session. On PostgreSQL the setting flurry.test_move_delay_ms also
	// makes the session's moves of the counter sleep that long halfway, so that
	// tests can catch other sessions inside a move. Never set it in production.
	TestClock bool
}

// Script is what Emit writes: the statements that install and those that
// uninstall the function, each one statement without a terminator.
type Script struct {
	Engine    Engine
	Install   []string
	Uninstall []string
}

// String returns the install statements as one script for psql or the mariadb
// client (with DELIMITER lines around the MariaDB function and triggers).
func (s Script) String() string { return s.text(s.Install) }

// UninstallText returns the uninstall statements as one script.
func (s Script) UninstallText() string { return s.text(s.Uninstall) }

func (s Script) text(stmts []string) string {
	var b strings.Builder
	for _, st := range stmts {
		if s.Engine == MariaDB && strings.Contains(st, "BEGIN\n") {
			b.WriteString("DELIMITER $$\n" + st + "$$\nDELIMITER ;\n\n")
			continue
		}
		b.WriteString(st + ";\n\n")
	}
	return b.String()
}

// ErrOptions is wrapped by Emit's (and Install's) errors about Options.
var ErrOptions = errors.New("indb: bad options")

func optErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, a...))
}

// plan is Options checked and turned into the numbers the SQL needs.
type plan struct {
	o                Options
	c                *bitcodec.Codec
	fn, schema       string
	node             int64 // the node fields' bits
	start            int64 // the first slot: the start of the tick after Floor
	startTick        int64 // that tick
	endMs            int64 // no ID at or after this instant
	maxWaitMs        int64
	lockKey          int64
	token            string // changes with every emit: sessions check the identity again
	seq, jump, ident string // PostgreSQL's objects: seq and jump only to drop those of older installs
	ctrName, slow    string
	ctr              pgCounter
	counter          string // MariaDB's counter table
}

func (o Options) plan() (*plan, error) {
	if o.Engine != Postgres && o.Engine != MariaDB {
		return nil, optErr("engine %v: use Postgres or MariaDB", o.Engine)
	}
	l := o.Layout
	if l == nil {
		return nil, optErr("no layout; pass one, e.g. layout.Parse(\"instagram\")")
	}
	p := &plan{o: o, c: bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)}
	p.fn = o.Function
	if p.fn == "" {
		p.fn = DefaultFunction
	}
	if err := checkName(p.fn, 40); err != nil {
		return nil, optErr("function name: %v", err)
	}
	p.schema = o.Schema
	if p.schema == "" {
		p.schema = "public"
	}
	if o.Engine == Postgres {
		if err := checkIdent(p.schema); err != nil {
			return nil, optErr("schema: %v", err)
		}
	}
	id, err := l.Compose(layout.Parts{Nodes: o.Node})
	if err != nil {
		return nil, optErr("node values: %v", err)
	}
	p.node = int64(id)
	for _, g := range o.Grants {
		if err := checkIdent(g); err != nil {
			return nil, optErr("role: %v", err)
		}
	}
	for _, t := range o.Targets {
		if err := checkIdent(t.Table); err != nil {
			return nil, optErr("table: %v", err)
		}
		if err := checkIdent(t.Column); err != nil {
			return nil, optErr("column: %v", err)
		}
	}
	end := l.Lifetime()
	if !o.Until.IsZero() && o.Until.Before(end) {
		end = o.Until
	}
	p.endMs = end.UnixMilli()
	if o.Floor > 0 {
		tick := p.c.TickOfMs(o.Floor) + 1
		if tick > p.c.MaxTick() {
			return nil, optErr("the node value's mark %s is at the end of the layout's time field", time.UnixMilli(o.Floor).UTC().Format(time.RFC3339))
		}
		if tick > 0 {
			p.start = tick << p.c.SeqBits
			p.startTick = tick
		}
	}
	wait := o.MaxWait
	switch {
	case wait == 0:
		wait = max(DefaultMaxWait, 2*l.Unit())
	case wait < 0:
		wait = 0
	case wait > time.Minute:
		return nil, optErr("MaxWait %v is longer than a minute; a call that waits holds its transaction's locks", wait)
	}
	p.maxWaitMs = wait.Milliseconds()
	h := fnv.New64a()
	h.Write([]byte("flurry/indb/" + p.schema + "." + p.fn))
	p.lockKey = int64(h.Sum64() >> 1)
	var b [8]byte
	rand.Read(b[:])
	p.token = hex.EncodeToString(b[:])
	p.seq, p.jump, p.ident, p.counter = p.fn+"_seq", p.fn+"_jump", p.fn+"_identity", p.fn+"_counter"
	p.ctrName, p.slow = p.fn+"_ctr", p.fn+"_slow"
	if o.Engine == Postgres {
		var ok bool
		if p.ctr, ok = newPGCounter(p.c); !ok {
			return nil, optErr("layout %s: its time and sequence fields take all 63 bits, and the PostgreSQL counter needs spare bits beside them; shorten one of them", l)
		}
	}
	return p, nil
}

// checkName accepts a lower-case letter, then lower-case letters, digits or _.
func checkName(s string, n int) error {
	if s == "" || len(s) > n {
		return fmt.Errorf("%q must have 1 to %d characters", s, n)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return fmt.Errorf("%q: use a lower-case letter, then lower-case letters, digits or _", s)
		}
	}
	return nil
}

// checkIdent accepts a plain identifier of up to 63 characters, any case.
func checkIdent(s string) error {
	if s == "" || len(s) > 63 {
		return fmt.Errorf("%q must have 1 to 63 characters", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("%q: use letters, digits and _, starting with a letter or _", s)
		}
	}
	return nil
}

// Emit returns the SQL that installs (and uninstalls) the function for o.
func Emit(o Options) (Script, error) {
	p, err := o.plan()
	if err != nil {
		return Script{}, err
	}
	if o.Engine == Postgres {
		return p.postgres(), nil
	}
	return p.mariadb(), nil
}

// lit writes s as an SQL string literal. MariaDB also takes \ as an escape.
func lit(e Engine, s string) string {
	s = strings.ReplaceAll(s, "'", "''")
	if e == MariaDB {
		s = strings.ReplaceAll(s, `\`, `\\`)
	}
	return "'" + s + "'"
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// targetsText is the state table's record of the targets.
func targetsText(ts []Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ",")
}

// parseTargets reads targetsText's form.
func parseTargets(s string) []Target {
	var out []Target
	for _, f := range strings.Split(s, ",") {
		if t, c, ok := strings.Cut(strings.TrimSpace(f), "."); ok {
			out = append(out, Target{Table: t, Column: c})
		}
	}
	return out
}

// replacer fills a template's {NAME}s.
func (p *plan) replacer(extra ...string) *strings.Replacer {
	c := p.c
	l := p.o.Layout
	lease := p.o.Lease
	value := int64(-1)
	if lease.Token != "" {
		value = lease.Value
	}
	r := []string{
		"{F}", p.fn,
		"{TOKEN}", p.token,
		"{SEQBITS}", itoa(int64(c.SeqBits)),
		"{SEQMASK}", itoa(c.MaxSequence()),
		"{TSHIFT}", itoa(int64(c.TimeShift)),
		"{SSHIFT}", itoa(int64(c.SeqShift)),
		"{NODE}", itoa(p.node),
		"{EPOCH}", itoa(c.EpochMs),
		"{UNIT}", itoa(c.UnitMs),
		"{ENDMS}", itoa(p.endMs),
		"{END}", time.UnixMilli(p.endMs).UTC().Format(time.RFC3339),
		"{MAXTICK}", itoa(c.MaxTick()),
		"{MAXWAIT}", itoa(p.maxWaitMs),
		"{START}", itoa(p.start),
		"{KEY}", itoa(p.lockKey),
		"{LAYOUT}", lit(p.o.Engine, l.String()),
		"{LAYOUTTEXT}", l.String(),
		"{NODETEXT}", nodeText(l, p.o.Node),
		"{NODELIT}", lit(p.o.Engine, nodeText(l, p.o.Node)),
		"{LSTORE}", lit(p.o.Engine, lease.Store),
		"{LSCOPE}", lit(p.o.Engine, lease.Scope),
		"{LVALUE}", itoa(value),
		"{LOWNER}", lit(p.o.Engine, lease.Owner),
		"{LTOKEN}", lit(p.o.Engine, lease.Token),
		"{TARGETS}", lit(p.o.Engine, targetsText(p.o.Targets)),
		"{STATE}", StateTable,
	}
	return strings.NewReplacer(append(r, extra...)...)
}

// nodeText writes the node values for people; "none" for a layout without node
// fields.
func nodeText(l *layout.Layout, nv layout.NodeValues) string {
	if len(l.NodeFields()) == 0 {
		return "none"
	}
	return l.FormatNodeValues(nv)
}
