package indb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/internal/nodepool"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// Errors of Install, Uninstall and Read, matched with errors.Is.
var (
	// ErrNotInstalled: the database has no row for the function in StateTable.
	ErrNotInstalled = errors.New("indb: the function is not installed in this database")
	// ErrCopy: the database is a copy of the one the function was installed in
	// (a template copy, a restore); see *CopyError.
	ErrCopy = errors.New("indb: this database is a copy of the one the function was installed in")
	// ErrLayoutMismatch: the function is installed with another layout.
	ErrLayoutMismatch = errors.New("indb: the function is installed with another layout")
	// ErrUnsupported: the server is not one of the engines (MySQL 8, an old version).
	ErrUnsupported = errors.New("indb: unsupported database server")
)

// CopyError says that the database is a copy of another that holds the function's
// node value. It matches ErrCopy.
type CopyError struct {
	Function string
	Node     string // the node values the copy would reuse
	Original string // the identity recorded at install
	Here     string // this database's identity
}

func (e *CopyError) Error() string {
	return fmt.Sprintf("indb: this database (%s) is a copy of the one %s was installed in (%s), whose node value (%s) it must not use: install with --new-node (InstallOptions.NewNode) to lease it a node value of its own",
		e.Here, e.Function, e.Original, e.Node)
}

// Is reports whether target is ErrCopy.
func (e *CopyError) Is(target error) bool { return target == ErrCopy }

// DefaultScope is InstallOptions.Scope's default: the scope flurry's lease
// sessions use by default, so that a database and flurry servers that lease from
// one store never share a node value.
const DefaultScope = "default"

// InstallOptions configures Install. Layout and Leases are required.
type InstallOptions struct {
	// Options is what to emit. Engine is found from the server; Node is filled
	// from the lease (and Node's fields that are not leased); Floor, Until and
	// Lease come from the lease; Schema empty means the connection's current
	// schema on PostgreSQL.
	Options
	// Leases is the lease store the node value comes from. It must implement
	// lease.Pinner. Install does not close it.
	Leases lease.Store
	// LeaseName names the store in the state table and in messages: a URL without
	// its password, or SelfStore.
	LeaseName string
	// Scope is the lease scope; the values of fixed node fields are added to it, as
	// lease.Session does. Empty means DefaultScope.
	Scope string
	// Leased names the node fields the leased value fills; empty means every node
	// field. The others take their values from Node.
	Leased []string
	// Fixed, when set, leases exactly this value of the pool.
	Fixed *int64
	// Owner names the database in the store's listings. Empty means the function,
	// the database's identity and this host.
	Owner string
	// NewNode lets Install give a copy of a database (ErrCopy) a node value of its
	// own, leaving the original's lease alone.
	NewNode bool
}

// Installed describes an installed function.
type Installed struct {
	Function string
	Schema   string // PostgreSQL
	Engine   Engine
	Layout   *layout.Layout
	Node     layout.NodeValues
	NodeText string
	Lease    LeaseInfo
	Targets  []Target
	// Until is when the function stops issuing: the end of the node value's pin.
	Until    time.Time
	Identity string // recorded at install
	// Here is this database's identity now; it differs from Identity in a copy.
	Here string
	// Counter is the counter's last slot (tick << seqBits | seq): no ID was issued
	// above it.
	Counter int64
	// Upgraded reports that Install replaced an installed function (same layout
	// and node value); Reowned that it gave a copy a node value of its own.
	Upgraded, Reowned bool
}

// Copy reports whether the database is a copy of the one the function was
// installed in.
func (in Installed) Copy() bool { return in.Here != in.Identity }

// CheckServer reads the server's version and refuses what the SQL does not run on:
// MySQL (no SEQUENCE, CREATE OR REPLACE FUNCTION or Aria), MariaDB before 10.6,
// PostgreSQL before 13.
func CheckServer(ctx context.Context, db *sql.DB, e Engine) error {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return fmt.Errorf("indb: reading the server's version: %w", err)
	}
	switch e {
	case Postgres:
		var num int
		if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
			return fmt.Errorf("indb: reading the server's version: %w", err)
		}
		if num < 130000 {
			return fmt.Errorf("%w: %s; flurry sql needs PostgreSQL 13 or later", ErrUnsupported, v)
		}
	case MariaDB:
		if !strings.Contains(v, "MariaDB") {
			return fmt.Errorf("%w: %s is MySQL, which has no SEQUENCE objects or Aria tables, the non-transactional counters the function needs; use MariaDB 10.6 or later, or flurry's server", ErrUnsupported, v)
		}
		var major, minor int
		fmt.Sscanf(v, "%d.%d", &major, &minor)
		if major < 10 || major == 10 && minor < 6 {
			return fmt.Errorf("%w: MariaDB %s; flurry sql needs 10.6 or later", ErrUnsupported, v)
		}
	}
	return nil
}

// identity reads this database's identity as the function computes it.
func identity(ctx context.Context, db *sql.DB, e Engine) (string, error) {
	q := pgIdentity
	if e == MariaDB {
		q = "SELECT " + myIdentity
	}
	var s string
	if err := db.QueryRowContext(ctx, q).Scan(&s); err != nil {
		if e == Postgres && strings.Contains(err.Error(), "permission denied") {
			return "", fmt.Errorf("indb: reading the cluster's system identifier: %w; install as a superuser, or GRANT EXECUTE ON FUNCTION pg_control_system() to this role", err)
		}
		return "", fmt.Errorf("indb: reading the database's identity: %w", err)
	}
	return s, nil
}

// currentSchema returns the PostgreSQL schema objects go into without a schema.
func currentSchema(ctx context.Context, db *sql.DB) (string, error) {
	var s sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&s); err != nil {
		return "", fmt.Errorf("indb: reading the current schema: %w", err)
	}
	if !s.Valid {
		return "", errors.New("indb: the connection has no current schema (search_path names no existing schema); set --schema")
	}
	return s.String, nil
}

func stateName(e Engine, schema string) string {
	if e == Postgres {
		return pgQuote(schema) + "." + StateTable
	}
	return StateTable
}

// Read returns what the state table records of the function fn ("" means
// DefaultFunction) in schema (PostgreSQL; "" means the current schema), with this
// database's identity and the counter. It returns an error wrapping
// ErrNotInstalled when there is no record.
func Read(ctx context.Context, db *sql.DB, e Engine, schema, fn string) (Installed, error) {
	if fn == "" {
		fn = DefaultFunction
	}
	in := Installed{Function: fn, Engine: e}
	if e == Postgres {
		if schema == "" {
			s, err := currentSchema(ctx, db)
			if err != nil {
				return in, err
			}
			schema = s
		}
		in.Schema = schema
	}
	here, err := identity(ctx, db, e)
	if err != nil {
		return in, err
	}
	in.Here = here
	var exists int
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '" + StateTable + "' AND table_schema = "
	if e == Postgres {
		q += lit(e, schema)
	} else {
		q += "DATABASE()"
	}
	if err := db.QueryRowContext(ctx, q).Scan(&exists); err != nil {
		return in, fmt.Errorf("indb: looking for %s: %w", StateTable, err)
	}
	if exists == 0 {
		return in, fmt.Errorf("%w (no table %s)", ErrNotInstalled, StateTable)
	}
	var layoutText, targets string
	var until int64
	err = db.QueryRowContext(ctx, "SELECT layout, node, lease_store, lease_scope, lease_value, lease_owner, lease_token, targets, identity, until_ms FROM "+
		stateName(e, schema)+" WHERE function_name = "+lit(e, fn)).
		Scan(&layoutText, &in.NodeText, &in.Lease.Store, &in.Lease.Scope, &in.Lease.Value, &in.Lease.Owner, &in.Lease.Token, &targets, &in.Identity, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return in, fmt.Errorf("%w (no row for %s in %s)", ErrNotInstalled, fn, StateTable)
	}
	if err != nil {
		return in, fmt.Errorf("indb: reading %s: %w", StateTable, err)
	}
	in.Targets = parseTargets(targets)
	if until > 0 {
		in.Until = time.UnixMilli(until).UTC()
	}
	if in.Layout, err = layout.Parse(layoutText); err != nil {
		return in, fmt.Errorf("indb: the layout recorded in %s: %w", StateTable, err)
	}
	if in.NodeText != "none" {
		if in.Node, err = in.Layout.ParseNodeValues(in.NodeText); err != nil {
			return in, fmt.Errorf("indb: the node values recorded in %s: %w", StateTable, err)
		}
	}
	in.Counter, err = counter(ctx, db, e, schema, fn, in.Layout)
	return in, err
}

// counter reads the counter's last slot (tick << seqBits | seq), or -1 when the
// counter is missing. On PostgreSQL it is the sequence <fn>_ctr in its encoding
// (pgCounter), or, for an install made before that, the slot sequence <fn>_seq.
func counter(ctx context.Context, db *sql.DB, e Engine, schema, fn string, l *layout.Layout) (int64, error) {
	if e == MariaDB {
		return readCounter(ctx, db, "SELECT slot FROM "+fn+"_counter WHERE id = 1")
	}
	v, err := readCounter(ctx, db, "SELECT last_value FROM "+pgQuote(schema)+"."+fn+"_ctr")
	if err != nil || v >= 0 {
		return pgSlot(l, v), err
	}
	return readCounter(ctx, db, "SELECT last_value FROM "+pgQuote(schema)+"."+fn+"_seq")
}

// pgSlot turns a value of PostgreSQL's counter into its slot.
func pgSlot(l *layout.Layout, v int64) int64 {
	c := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
	k, ok := newPGCounter(c)
	if !ok {
		return v
	}
	return k.slot(c, v)
}

func readCounter(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, q string) (int64, error) {
	var v int64
	err := db.QueryRowContext(ctx, q).Scan(&v)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) || strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "doesn't exist") {
			return -1, nil
		}
		return 0, fmt.Errorf("indb: reading the counter: %w", err)
	}
	return v, nil
}

// pool is how a leased value fills the node fields, as in a lease session, and the
// scope the value is leased in.
type pool struct {
	nodepool.Pool
	scope string
}

func newPool(o InstallOptions) (pool, error) {
	np, err := nodepool.Plan(poolLayout(o.Layout), o.Leased, o.Node)
	var wide *nodepool.WideError
	switch {
	case errors.As(err, &wide):
		return pool{}, optErr("%v: give some of them with --node", err)
	case err != nil:
		return pool{}, optErr("%v", err)
	}
	p := pool{Pool: np, scope: o.Scope}
	if p.scope == "" {
		p.scope = DefaultScope
	}
	p.scope += np.Fixed
	if err := leasestore.CheckScope(p.scope); err != nil {
		return p, optErr("%v", err)
	}
	if o.Fixed != nil && (*o.Fixed < 0 || *o.Fixed >= p.Size) {
		return p, optErr("node value %d is outside the pool 0..%d of the leased fields", *o.Fixed, p.Size-1)
	}
	return p, nil
}

// Install installs the function o describes in db, or replaces it. It
//   - checks the server (CheckServer) and reads the database's identity;
//   - on a first install, leases a node value from o.Leases and pins it there
//     (lease.Pinner) until the layout's time runs out or a century passes, and
//     starts the counter above the value's mark;
//   - on a database that has the function, with this identity, keeps its node
//     value and lease and replaces the function (an upgrade): the layout must be
//     the same (ErrLayoutMismatch), targets are added to those it has;
//   - on a copy (another identity: a template copy, a restore) returns a
//     *CopyError, unless o.NewNode, when it leases a new value for the copy.
//
// The statements run one by one; on PostgreSQL the function's objects are made in
// one transaction.
func Install(ctx context.Context, db *sql.DB, o InstallOptions) (Installed, error) {
	e := o.Engine
	if o.Layout == nil {
		return Installed{}, optErr("no layout")
	}
	if o.Leases == nil {
		return Installed{}, optErr("no lease store")
	}
	pinner, ok := o.Leases.(lease.Pinner)
	if !ok {
		return Installed{}, optErr("the lease store %s cannot hold a lease without renewals (it does not implement lease.Pinner); use a file, SQL, Redis or etcd store", o.LeaseName)
	}
	if err := CheckServer(ctx, db, e); err != nil {
		return Installed{}, err
	}
	if e == Postgres && o.Schema == "" {
		s, err := currentSchema(ctx, db)
		if err != nil {
			return Installed{}, err
		}
		o.Schema = s
	}
	if _, err := o.Options.plan(); err != nil { // the options, before a lease is taken
		return Installed{}, err
	}
	p, err := newPool(o)
	if err != nil {
		return Installed{}, err
	}
	prev, err := Read(ctx, db, e, o.Schema, o.Function)
	fresh := errors.Is(err, ErrNotInstalled)
	if err != nil && !fresh {
		return Installed{}, err
	}
	here := prev.Here
	if !fresh {
		if !prev.Layout.Equal(o.Layout) {
			return prev, fmt.Errorf("%w: %s is installed with layout %s, not %s; IDs of two layouts in one column do not sort or decode together: uninstall it first, or install under another --function",
				ErrLayoutMismatch, prev.Function, prev.Layout, o.Layout)
		}
		if prev.Copy() && !o.NewNode {
			return prev, &CopyError{Function: prev.Function, Node: prev.NodeText, Original: prev.Identity, Here: here}
		}
		if !prev.Copy() {
			// An upgrade: the same node value and lease.
			o.Node = prev.Node
			o.Lease = prev.Lease
			o.Targets = mergeTargets(prev.Targets, o.Targets)
			o.Floor = 0
			o.Until = prev.Until
			script, err := Emit(o.Options)
			if err != nil {
				return prev, err
			}
			if err := run(ctx, db, e, script.Install); err != nil {
				return prev, err
			}
			in, err := Read(ctx, db, e, o.Schema, o.Function)
			in.Upgraded = true
			return in, err
		}
	}

	// A first install, or a copy's own node value: lease one and pin it.
	owner := o.Owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = fmt.Sprintf("%s %s in %s (flurry sql on %s)", e, functionName(o.Function), here, host)
		if len(owner) > 200 {
			owner = owner[:200]
		}
	}
	var l lease.Lease
	if o.Fixed != nil {
		l, err = o.Leases.AcquireValue(ctx, p.scope, *o.Fixed, owner, time.Minute)
	} else {
		l, err = o.Leases.Acquire(ctx, p.scope, p.Size, owner, time.Minute)
	}
	if err != nil {
		return Installed{}, fmt.Errorf("indb: leasing a node value from %s (scope %s): %w", o.LeaseName, p.scope, err)
	}
	until := pinEnd(o.Layout)
	floor := l.Mark
	pinned, err := pinner.Pin(ctx, l, time.Until(until).Truncate(time.Millisecond), until.UnixMilli())
	if err != nil {
		o.Leases.Release(ctx, l, floor)
		return Installed{}, fmt.Errorf("indb: pinning node value %d in %s: %w", l.Value, o.LeaseName, err)
	}
	o.Node = p.NodeOf(o.Node, pinned.Value)
	o.Floor = floor
	o.Until = until
	o.Lease = LeaseInfo{Store: o.LeaseName, Scope: pinned.Scope, Value: pinned.Value, Owner: pinned.Owner, Token: pinned.Token}
	if !fresh {
		o.Targets = mergeTargets(prev.Targets, o.Targets)
	}
	script, err := Emit(o.Options)
	if err == nil {
		stmts := script.Install
		if !fresh {
			// The copy's row takes this database's identity and the new lease, last:
			// only once the function with the new node value is in place may the
			// identity check pass here. (On PostgreSQL all of it is one transaction;
			// on MariaDB a failure before this leaves the copy refusing, as before.)
			l := o.Lease
			stmts = append(stmts[:len(stmts):len(stmts)], "UPDATE "+stateName(e, o.Schema)+" SET identity = "+lit(e, here)+
				", node = "+lit(e, nodeText(o.Layout, o.Node))+", lease_store = "+lit(e, l.Store)+", lease_scope = "+lit(e, l.Scope)+
				", lease_value = "+strconv.FormatInt(l.Value, 10)+", lease_owner = "+lit(e, l.Owner)+", lease_token = "+lit(e, l.Token)+
				", targets = "+lit(e, targetsText(o.Targets))+", until_ms = "+strconv.FormatInt(o.Until.UnixMilli(), 10)+
				" WHERE function_name = "+lit(e, functionName(o.Function)))
		}
		err = run(ctx, db, e, stmts)
	}
	if err != nil {
		// Nothing issued with the value: hand it back with the mark it had.
		if rerr := o.Leases.Release(ctx, pinned, floor); rerr != nil {
			err = fmt.Errorf("%w; and releasing node value %d failed: %v", err, pinned.Value, rerr)
		}
		return Installed{}, err
	}
	in, err := Read(ctx, db, e, o.Schema, o.Function)
	in.Reowned = !fresh
	return in, err
}

func functionName(fn string) string {
	if fn == "" {
		return DefaultFunction
	}
	return fn
}

// pinEnd is how long a database holds its node value: until its layout's time
// runs out, or a century (lease.MaxPinTTL), whichever comes first, less a day of
// margin for the store's clock.
func pinEnd(l *layout.Layout) time.Time {
	end := time.Now().Add(lease.MaxPinTTL - 24*time.Hour)
	if lt := l.Lifetime(); lt.Before(end) {
		end = lt
	}
	return end.Truncate(time.Millisecond)
}

func mergeTargets(a, b []Target) []Target {
	out := append([]Target(nil), a...)
	for _, t := range b {
		dup := false
		for _, u := range out {
			dup = dup || u == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}

// run executes statements: in one transaction on PostgreSQL, one by one on
// MariaDB (whose DDL commits by itself).
func run(ctx context.Context, db *sql.DB, e Engine, stmts []string) error {
	return inTx(ctx, db, e, func(x execer) error {
		for _, s := range stmts {
			if _, err := x.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("indb: %s: %w", firstLine(s), err)
			}
		}
		return nil
	})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// UninstallOptions configures Uninstall.
type UninstallOptions struct {
	// Function and Schema name the function; empty means DefaultFunction and the
	// connection's current schema (PostgreSQL).
	Function, Schema string
	// Leases is the store the node value was leased from; nil when it is not at
	// hand, and then the value stays pinned (Uninstalled.Released is false).
	Leases lease.Store
}

// Uninstalled says what Uninstall did.
type Uninstalled struct {
	Installed
	// Released reports that the node value's lease was released, with Mark.
	Released bool
	Mark     int64
}

// Uninstall removes the function, its triggers or column defaults, its counter
// and its row of the state table, then releases the node value's lease with a
// mark at the end of the counter's last tick, so a later holder of the value
// starts above every ID issued. The counter is read once no call can move it:
// after the function is dropped, with PostgreSQL's sequence locked against
// nextval (an ALTER SEQUENCE that waits for every transaction that took a slot).
// In a copy (another identity) it removes the objects but leaves the lease
// alone: it is the original's.
func Uninstall(ctx context.Context, db *sql.DB, e Engine, o UninstallOptions) (Uninstalled, error) {
	in, err := Read(ctx, db, e, o.Schema, o.Function)
	out := Uninstalled{Installed: in}
	if err != nil {
		return out, err
	}
	s, err := Emit(Options{Engine: e, Layout: in.Layout, Node: in.Node, Function: in.Function, Schema: in.Schema, Targets: in.Targets})
	if err != nil {
		return out, err
	}
	// The statements before the counter's drop, then the counter read, then the rest.
	split := len(s.Uninstall)
	for i, st := range s.Uninstall {
		if strings.HasPrefix(st, "DROP SEQUENCE") || strings.HasPrefix(st, "DROP TABLE") {
			split = i
			break
		}
	}
	last := int64(-1)
	err = inTx(ctx, db, e, func(x execer) error {
		for _, st := range s.Uninstall[:split] {
			if _, err := x.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("indb: %s: %w", firstLine(st), err)
			}
		}
		if e == MariaDB {
			if err := x.QueryRowContext(ctx, "SELECT slot FROM "+in.Function+"_counter WHERE id = 1").Scan(&last); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("indb: reading the counter: %w", err)
			}
		} else {
			// The counter, or the slot sequence of an install made before it.
			for _, name := range []string{in.Function + "_ctr", in.Function + "_seq"} {
				seq := pgQuote(in.Schema) + "." + name
				var exists bool
				if err := x.QueryRowContext(ctx, "SELECT to_regclass("+lit(e, seq)+") IS NOT NULL").Scan(&exists); err != nil {
					return fmt.Errorf("indb: looking for the counter: %w", err)
				}
				if !exists {
					continue
				}
				if _, err := x.ExecContext(ctx, "ALTER SEQUENCE "+seq+" NO CYCLE"); err != nil {
					return fmt.Errorf("indb: locking the counter: %w", err)
				}
				var v int64
				if err := x.QueryRowContext(ctx, "SELECT last_value FROM "+seq).Scan(&v); err != nil {
					return fmt.Errorf("indb: reading the counter: %w", err)
				}
				if name == in.Function+"_ctr" {
					v = pgSlot(in.Layout, v)
				}
				last = max(last, v)
			}
		}
		for _, st := range s.Uninstall[split:] {
			if _, err := x.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("indb: %s: %w", firstLine(st), err)
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Counter = last
	if in.Copy() || in.Lease.Token == "" || o.Leases == nil {
		return out, nil
	}
	c := bitcodec.New(in.Layout.Fields(), in.Layout.Unit(), in.Layout.Epoch(), layout.ErrInvalid)
	out.Mark = max(c.TickStartMs(max(last>>c.SeqBits, 0)+1)-1, 0)
	l := lease.Lease{Scope: in.Lease.Scope, Value: in.Lease.Value, Owner: in.Lease.Owner, Token: in.Lease.Token}
	if err := o.Leases.Release(ctx, l, out.Mark); err != nil {
		return out, fmt.Errorf("indb: the function is removed, but releasing node value %d (scope %s) failed: %w", l.Value, l.Scope, err)
	}
	out.Released = true
	return out, nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs f in a transaction on PostgreSQL; on MariaDB, whose DDL commits by
// itself, on one connection.
func inTx(ctx context.Context, db *sql.DB, e Engine, f func(execer) error) error {
	if e == MariaDB {
		c, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("indb: %w", err)
		}
		defer c.Close()
		return f(c)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("indb: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("indb: %w", err)
	}
	return nil
}

// poolLayout gives nodepool what it reads of a layout: nodepool sits among the
// helpers below layout, so it takes the node fields as plain values.
func poolLayout(l *layout.Layout) nodepool.Layout {
	var fields []nodepool.Field
	for _, f := range l.NodeFields() {
		fields = append(fields, nodepool.Field{Name: f.Name, Bits: f.Bits})
	}
	return nodepool.Layout{Name: l.String(), Fields: fields, Check: func(v nodepool.Values) error { return l.CheckNodeValues(v) }}
}
