package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// TinyID is a segment.Store on didi tinyid's tiny_id_info table (tinyid-server's
// db.sql), shared with running tinyid servers. It creates no table and uses
// tinyid's own optimistic update, so it needs SELECT and UPDATE on tiny_id_info
// (and SELECT on tiny_id_token for Tokens).
//
// tinyid's semantics differ from Leaf's, and the store keeps tinyid's:
//
//   - max_id is the LAST ID handed out (Leaf's is the next one): a range is
//     (old max_id, new max_id].
//   - A row's IDs are those with id % delta == remainder; step is in ID space, so
//     a range of step holds about step/delta IDs.
//   - max_id only changes by UPDATE ... SET max_id = new, version = version + 1
//     WHERE id = ? AND max_id = old AND version = v AND biz_type = ?, retried on a
//     conflict: no row lock is taken.
//
// The store's counter values are a row's IDs numbered in ID space: counter c is
// the ID c*delta + remainder. A caller turns counters back into IDs with the row's
// Residue (segment.Allocator does not know it; see server's tinyid mode).
type TinyID struct {
	h       *sqlconn.Handle
	dialect Dialect
	q       tinyQueries

	mu   sync.Mutex
	seen map[string][2]int64 // tag -> delta, remainder the first Take saw
}

var _ segment.Store = (*TinyID)(nil)

// TinyIDTokenTable is tinyid's token table: token, biz_type pairs.
const TinyIDTokenTable = "tiny_id_token"

// tinyAttempts bounds the optimistic update's retries on a version conflict.
const tinyAttempts = 20

type tinyQueries struct {
	probe, read, update, insert, setStep, list, tokens string
}

func tinyIDQueries(d Dialect, table string) tinyQueries {
	now := d.now()
	q := tinyQueries{
		probe: "SELECT id, biz_type, begin_id, max_id, step, delta, remainder, version FROM " + table + " WHERE 1 = 0",
		read:  "SELECT id, max_id, step, delta, remainder, version FROM " + table + " WHERE biz_type = ?",
		update: "UPDATE " + table + " SET max_id = ?, update_time = " + now + ", version = version + 1" +
			" WHERE id = ? AND max_id = ? AND version = ? AND biz_type = ?",
		insert: "INSERT INTO " + table + " (biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version)" +
			" VALUES (?, ?, ?, ?, 1, 0, " + now + ", " + now + ", 0)",
		setStep: "UPDATE " + table + " SET step = ?, update_time = " + now + ", version = version + 1 WHERE biz_type = ?",
		list:    "SELECT biz_type, max_id, step, delta, remainder FROM " + table,
		tokens:  "SELECT token, biz_type FROM " + TinyIDTokenTable,
	}
	sqlconn.Placeholders(sqlconn.Engine(d), &q.read, &q.update, &q.insert, &q.setStep)
	return q
}

// OpenTinyID opens a TinyID store; an empty o.Table means tiny_id_info. The table
// must exist with tinyid's columns; o.SkipCreate is implied.
func OpenTinyID(ctx context.Context, o Options) (*TinyID, error) {
	h, err := sqlconn.OpenHandle(ctx, o.probeOnly(TinyIDTable, func(d Dialect, table string) string {
		return tinyIDQueries(d, table).probe
	}))
	if err != nil {
		return nil, err
	}
	d := Dialect(h.Engine)
	return &TinyID{h: h, dialect: d, q: tinyIDQueries(d, h.Table), seen: map[string][2]int64{}}, nil
}

// Close closes the store's connections.
func (s *TinyID) Close() error { return s.h.Close() }

// DB returns the store's database handle.
func (s *TinyID) DB() *sql.DB { return s.h.DB }

// tinyRow is a tiny_id_info row.
type tinyRow struct {
	id, maxID, step, delta, rem, version int64
}

// floorDiv divides rounding towards minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// counterMax is the highest counter whose ID the row has handed out (max_id or
// below); -1 and lower when none.
func (r tinyRow) counterMax() int64 { return floorDiv(r.maxID-r.rem, r.delta) }

// idOf is the ID of counter c.
func (r tinyRow) idOf(c int64) int64 { return c*r.delta + r.rem }

func (s *TinyID) read(ctx context.Context, tag string) (tinyRow, error) {
	var r tinyRow
	var step sql.NullInt64
	err := s.h.DB.QueryRowContext(ctx, s.q.read, tag).Scan(&r.id, &r.maxID, &step, &r.delta, &r.rem, &r.version)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("segment/sqlstore: biz_type %s in %s: %w", tag, s.h.Table, segment.ErrUnknownTag)
	}
	if err != nil {
		return r, err
	}
	r.step = step.Int64
	if r.delta < 1 || r.rem < 0 || r.rem >= r.delta {
		return r, fmt.Errorf("segment/sqlstore: biz_type %s in %s has delta %d and remainder %d; tinyid needs delta >= 1 and 0 <= remainder < delta", tag, s.h.Table, r.delta, r.rem)
	}
	return r, nil
}

// check remembers the row's residue class and refuses a change: the IDs of
// counters already handed out would change with it.
func (s *TinyID) check(tag string, r tinyRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := [2]int64{r.delta, r.rem}
	if was, ok := s.seen[tag]; ok && was != got {
		return fmt.Errorf("segment/sqlstore: biz_type %s in %s: delta/remainder changed from %d/%d to %d/%d while serving; restart flurry after such a change", tag, s.h.Table, was[0], was[1], got[0], got[1])
	}
	s.seen[tag] = got
	return nil
}

// Residue returns the delta and remainder of a biz type: counter c of the store is
// the ID c*delta + remainder.
func (s *TinyID) Residue(ctx context.Context, tag string) (delta, remainder int64, err error) {
	defer classifyInto(&err)
	if err := s.h.Ensure(ctx); err != nil {
		return 0, 0, err
	}
	var r tinyRow
	err = sqlconn.Retry(ctx, func() error {
		var err error
		r, err = s.read(ctx, tag)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if err := s.check(tag, r); err != nil {
		return 0, 0, err
	}
	return r.delta, r.rem, nil
}

// advance runs tinyid's optimistic update until it wins: next computes the new
// max_id from the row read, done gets the row and the new max_id after the win.
func (s *TinyID) advance(ctx context.Context, tag string, next func(r tinyRow) (int64, error)) error {
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	for i := 1; ; i++ {
		var won bool
		err := sqlconn.Retry(ctx, func() error {
			r, err := s.read(ctx, tag)
			if err != nil {
				return err
			}
			newMax, err := next(r)
			if err != nil {
				return err
			}
			res, err := s.h.DB.ExecContext(ctx, s.q.update, newMax, r.id, r.maxID, r.version, tag)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			won = err == nil && n == 1
			return err
		})
		if err != nil {
			if errors.Is(err, segment.ErrUnknownTag) || errors.Is(err, segment.ErrExhausted) {
				return err
			}
			return fmt.Errorf("segment/sqlstore: biz_type %s in %s: %w", tag, s.h.Table, err)
		}
		if won {
			return nil
		}
		if i == tinyAttempts {
			return fmt.Errorf("segment/sqlstore: biz_type %s in %s: %d version conflicts in a row; other servers update the row too often: raise its step", tag, s.h.Table, i)
		}
		if err := sqlconn.Backoff().Wait(ctx, i); err != nil {
			return err
		}
	}
}

// Take implements segment.Store in counter space (see TinyID): the fresh block's
// last ID becomes max_id.
func (s *TinyID) Take(ctx context.Context, tag string, n, floor, limit int64) (_ segment.Block, err error) {
	defer classifyInto(&err)
	limit, err = segmentstore.CheckTake(tag, n, floor, limit)
	if err != nil {
		return segment.Block{}, err
	}
	var b segment.Block
	err = s.advance(ctx, tag, func(r tinyRow) (int64, error) {
		if err := s.check(tag, r); err != nil {
			return 0, err
		}
		lim := min(limit, (math.MaxInt64-r.rem)/r.delta)
		fresh, err := segmentstore.FreshBlock(max(r.counterMax(), 0), floor, n, lim)
		if err != nil {
			return 0, fmt.Errorf("segment/sqlstore: biz_type %s: %w; move to a new biz_type", tag, err)
		}
		b = segment.Block{First: fresh.First, Last: fresh.Last, Step: max(r.step/r.delta, 1)}
		return r.idOf(b.Last), nil
	})
	if err != nil {
		return segment.Block{}, err
	}
	return b, nil
}

// Return implements segment.Store: when max_id is still the ID of b.Last, it is
// rewound to the ID before b.First (with tinyid's optimistic update), so the next
// range, flurry's or tinyid's, starts at b.First. When another server took a range
// since, the values are skipped, never issued twice, as tinyid skips its buffers on
// every restart.
func (s *TinyID) Return(ctx context.Context, tag string, b segment.Block) (err error) {
	defer classifyInto(&err)
	if err := segmentstore.CheckReturn(tag, b); err != nil {
		return err
	}
	skip := errors.New("moved on")
	err = s.advance(ctx, tag, func(r tinyRow) (int64, error) {
		if err := s.check(tag, r); err != nil {
			return 0, err
		}
		if r.maxID != r.idOf(b.Last) {
			return 0, skip
		}
		return r.idOf(b.First - 1), nil
	})
	if errors.Is(err, skip) {
		return nil
	}
	return err
}

// Create implements segment.Store: a row with delta 1 and remainder 0, begin_id and
// max_id t.Max (the first ID is t.Max+1), as tinyid's README asks rows to be made.
// It needs INSERT on the table.
func (s *TinyID) Create(ctx context.Context, t segment.Tag) error {
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	if len(t.Name) > 63 {
		return fmt.Errorf("segment/sqlstore: biz_type %q: tinyid's column holds 63 characters", t.Name)
	}
	if t.Step > math.MaxInt32 {
		return fmt.Errorf("segment/sqlstore: step %d: tinyid's step column is an INT (at most %d)", t.Step, math.MaxInt32)
	}
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	if _, err := s.read(ctx, t.Name); err == nil {
		return fmt.Errorf("segment/sqlstore: biz_type %s in %s: %w", t.Name, s.h.Table, segment.ErrTagExists)
	} else if !errors.Is(err, segment.ErrUnknownTag) {
		return err
	}
	if _, err := s.h.DB.ExecContext(ctx, s.q.insert, t.Name, t.Max, t.Max, t.Step); err != nil {
		return fmt.Errorf("segment/sqlstore: create biz_type %s in %s: %w", t.Name, s.h.Table, err)
	}
	return nil
}

// SetStep implements segment.Store; step is in ID space, as tinyid's column.
func (s *TinyID) SetStep(ctx context.Context, tag string, step int64) error {
	if err := segmentstore.CheckSetStep(tag, step); err != nil {
		return err
	}
	if step > math.MaxInt32 {
		return fmt.Errorf("segment/sqlstore: step %d: tinyid's step column is an INT (at most %d)", step, math.MaxInt32)
	}
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	res, err := s.h.DB.ExecContext(ctx, s.q.setStep, step, tag)
	if err != nil {
		return fmt.Errorf("segment/sqlstore: set the step of biz_type %s: %w", tag, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("segment/sqlstore: biz_type %s in %s: %w", tag, s.h.Table, segment.ErrUnknownTag)
	}
	return nil
}

// Tags implements segment.Store in counter space: Max is the highest counter
// handed out and Step the row's step divided by its delta.
func (s *TinyID) Tags(ctx context.Context) (_ []segment.Tag, err error) {
	defer classifyInto(&err)
	return listTags(ctx, s.h, s.q.list, func(rows *sql.Rows) (segment.Tag, error) {
		var t segment.Tag
		var r tinyRow
		var step sql.NullInt64
		if err := rows.Scan(&t.Name, &r.maxID, &step, &r.delta, &r.rem); err != nil {
			return t, err
		}
		r.delta = max(r.delta, 1)
		t.Max, t.Step = max(r.counterMax(), 0), max(step.Int64/r.delta, 1)
		return t, nil
	})
}

// Segment is a range as tinyid's nextSegmentId hands it to clients: IDs in
// (CurrentID, MaxID] with id % Delta == Remainder; a client loads the next one
// once it reaches LoadingID. It is segment.TinyIDSegment, which flurry's server
// serves without importing this package.
type Segment = segment.TinyIDSegment

// NextSegment takes a range exactly as tinyid's DbSegmentIdServiceImpl does:
// max_id += step, loadingId = currentId + step*20/100.
func (s *TinyID) NextSegment(ctx context.Context, tag string) (_ Segment, err error) {
	defer classifyInto(&err)
	var seg Segment
	err = s.advance(ctx, tag, func(r tinyRow) (int64, error) {
		if r.step < 1 {
			return 0, fmt.Errorf("segment/sqlstore: biz_type %s has step %d; give it a positive step", tag, r.step)
		}
		if r.maxID > math.MaxInt64-r.step {
			return 0, fmt.Errorf("segment/sqlstore: biz_type %s: %w", tag, segment.ErrExhausted)
		}
		seg = Segment{CurrentID: r.maxID, LoadingID: r.maxID + r.step*20/100, MaxID: r.maxID + r.step, Delta: r.delta, Remainder: r.rem}
		return seg.MaxID, nil
	})
	return seg, err
}

// Tokens reads tinyid's tiny_id_token table: each token with the biz types it may
// ask for, both trimmed as tinyid's TinyIdToken trims them.
func (s *TinyID) Tokens(ctx context.Context) (_ map[string][]string, err error) {
	defer classifyInto(&err)
	out := map[string][]string{}
	err = sqlconn.Retry(ctx, func() error {
		clear(out)
		rows, err := s.h.DB.QueryContext(ctx, s.q.tokens)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var tok, biz string
			if err := rows.Scan(&tok, &biz); err != nil {
				return err
			}
			tok, biz = javaTrim(tok), javaTrim(biz) // TinyIdToken's setters trim
			out[tok] = append(out[tok], biz)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("segment/sqlstore: read %s: %w", TinyIDTokenTable, err)
	}
	return out, nil
}

// javaTrim is Java's String.trim: every character up to U+0020 cut from both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// classified is an error marked with the class of the failure (see classify).
type classified struct {
	err, class error
}

func (c *classified) Error() string   { return c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.err, c.class} }

// classifyInto marks *errp with the class of the failure, segment.ErrStoreDenied,
// ErrStoreNoTable or ErrStoreUnreachable, when the engine's error tells it, so
// that a caller can say which without quoting the database's message.
func classifyInto(errp *error) {
	err := *errp
	if err == nil {
		return
	}
	var class error
	switch {
	case sqlconn.Denied(err):
		class = segment.ErrStoreDenied
	case sqlconn.NoTable(err):
		class = segment.ErrStoreNoTable
	default:
		if _, ok := sqlconn.Unreachable(err); ok {
			class = segment.ErrStoreUnreachable
		}
	}
	if class != nil && !errors.Is(err, class) {
		*errp = &classified{err: err, class: class}
	}
}
