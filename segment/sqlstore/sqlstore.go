package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// DefaultTable is the tag table a zero Options uses. The returned blocks live in
// the table of the same name with the suffix "_returned".
const DefaultTable = "flurry_segment"

// maxTableLen leaves room for the suffix "_returned" in 63 characters.
const maxTableLen = 63 - len("_returned")

// Options configures a Store. The zero Options is valid for New; Open needs a
// Dialect and a Connector, which ParseURL sets.
type Options struct {
	// Dialect is the engine Open connects to. ParseURL sets it from the URL's
	// scheme; New takes its own and ignores this one.
	Dialect Dialect
	// Connector opens Open's connections (database/sql's sql.OpenDB). ParseURL
	// makes it from the URL with the engine's driver; any driver.Connector for the
	// Dialect's engine works. New ignores it.
	Connector driver.Connector
	// Table names the tag table, in Meituan Leaf's leaf_alloc form. Empty means
	// DefaultTable; "leaf_alloc" serves an existing Leaf table. It must be a plain
	// identifier: letters, digits and underscores, not starting with a digit, at most
	// 54 characters. ParseURL sets it from the URL's table= key.
	Table string
	// Schema selects, for OpenAny, the form of the tables: SchemaFlurry (empty
	// means it, or SchemaTinyID when Table is TinyIDTable), SchemaLeaf or
	// SchemaTinyID. ParseURL sets it from the URL's schema= key. Open and New serve
	// SchemaFlurry only.
	Schema string
	// SkipCreate leaves out CREATE TABLE IF NOT EXISTS, for accounts without the
	// right to create tables; both tables must then exist with the documented
	// columns. The zero value creates the tables that are missing.
	SkipCreate bool
	// RequestTimeout bounds each call whose context has no deadline, Open
	// included. Zero means 5s for PostgreSQL and MySQL, and no bound for SQLite
	// (whose calls wait for other writers as long as the URL's busy_timeout);
	// negative means no bound. ParseURL sets it from the URL's request_timeout=
	// key. A call that runs out of time fails with an error matching
	// bound.ErrNoAnswer.
	RequestTimeout time.Duration

	name string // the URL without its password, for messages; set by ParseURL
}

// Store is a segment.Store in two SQL tables. It is safe for concurrent use.
type Store struct {
	q queries
	h *sqlconn.Handle
}

var _ segment.Store = (*Store)(nil)

// Dialect returns the store's SQL dialect.
func (s *Store) Dialect() Dialect { return Dialect(s.h.Engine) }

// Table returns the name of the store's tag table.
func (s *Store) Table() string { return s.h.Table }

// DB returns the store's database handle.
func (s *Store) DB() *sql.DB { return s.h.DB }

// Close closes the database handle if Open made it; a store made by New leaves the
// caller's handle open.
func (s *Store) Close() error { return s.h.Close() }

// inTx runs fn in a transaction and commits, again from the start while it fails
// with a deadlock, a lock wait timeout, a serialization failure or a busy database,
// up to sqlconn.Attempts times. Errors are prefixed with what.
func (s *Store) inTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	err := s.h.InTx(ctx, fn)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, segment.ErrUnknownTag), errors.Is(err, segment.ErrTagExists), errors.Is(err, segment.ErrExhausted):
		return err
	case sqlconn.Transient(err):
		return fmt.Errorf("segment/sqlstore: %s: gave up after %d attempts, each ended by a deadlock, lock timeout or busy database; the database is overloaded, or a session holds the tag's row locked (look for an open transaction on %s): %w",
			what, sqlconn.Attempts, s.h.Table, err)
	}
	return fmt.Errorf("segment/sqlstore: %s: %w", what, err)
}

// row is a tag's row as a transaction locked it.
type row struct {
	max  int64 // the highest value handed out: max_id - 1, or 2^63-1 with the top mark
	step int64
}

// lock locks tag's row for the rest of tx and reads it. Every transaction that
// changes a tag locks its row first, so they never wait for each other in a cycle.
func (s *Store) lock(ctx context.Context, tx *sql.Tx, tag string) (row, error) {
	var maxID int64
	var r row
	err := tx.QueryRowContext(ctx, s.q.lock, tag).Scan(&maxID, &r.step)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("segment/sqlstore: tag %s in %s: %w", tag, s.h.Table, segment.ErrUnknownTag)
	}
	if err != nil {
		return r, err
	}
	r.max = max(maxID-1, 0)
	if maxID == math.MaxInt64 {
		var top int64
		if err := tx.QueryRowContext(ctx, s.q.top, tag).Scan(&top); err != nil {
			return r, err
		}
		if top > 0 {
			r.max = math.MaxInt64
		}
	}
	return r, nil
}

// setMax stores max as the highest value handed out: max_id = max+1, or for
// 2^63-1, which max_id cannot exceed, max_id = 2^63-1 and the top mark.
func (s *Store) setMax(ctx context.Context, tx *sql.Tx, tag string, max int64) error {
	maxID := max + 1
	if max == math.MaxInt64 {
		maxID = math.MaxInt64
		if _, err := tx.ExecContext(ctx, s.q.setTop, tag); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, s.q.advance, maxID, tag)
	return err
}

// Take implements segment.Store. In one transaction it locks the tag's row, then
// claims the lowest returned block above floor (and within limit), or else advances
// max_id past n fresh values.
func (s *Store) Take(ctx context.Context, tag string, n, floor, limit int64) (_ segment.Block, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	limit, err = segmentstore.CheckTake(tag, n, floor, limit)
	if err != nil {
		return segment.Block{}, err
	}
	var b segment.Block
	err = s.inTx(ctx, "take from tag "+tag, func(tx *sql.Tx) error {
		r, err := s.lock(ctx, tx, tag)
		if err != nil {
			return err
		}
		b = segment.Block{Step: r.step}
		err = tx.QueryRowContext(ctx, s.q.claimable, tag, floor, limit).Scan(&b.First, &b.Last)
		switch {
		case err == nil:
			b.Returned = true
			_, err = tx.ExecContext(ctx, s.q.deleteBlock, tag, b.First)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		fresh, err := segmentstore.FreshBlock(r.max, floor, n, limit)
		if err != nil {
			return fmt.Errorf("segment/sqlstore: tag %s: %w; move to a new tag", tag, err)
		}
		b.First, b.Last = fresh.First, fresh.Last
		return s.setMax(ctx, tx, tag, b.Last)
	})
	if err != nil {
		return segment.Block{}, err
	}
	return b, nil
}

// Return implements segment.Store. It refuses a block with values above the tag's
// Max, which were never handed out, and one that overlaps a block waiting already.
func (s *Store) Return(ctx context.Context, tag string, b segment.Block) (err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckReturn(tag, b); err != nil {
		return err
	}
	return s.inTx(ctx, fmt.Sprintf("return %d..%d to tag %s", b.First, b.Last, tag), func(tx *sql.Tx) error {
		r, err := s.lock(ctx, tx, tag)
		if err != nil {
			return err
		}
		if b.Last > r.max {
			return fmt.Errorf("values above %d were never handed out; return only what Take gave", r.max)
		}
		var overlaps int64
		if err := tx.QueryRowContext(ctx, s.q.overlap, tag, b.Last, b.First).Scan(&overlaps); err != nil {
			return err
		}
		if overlaps > 0 {
			return errors.New("it overlaps a block returned before; a block may be returned once only")
		}
		_, err = tx.ExecContext(ctx, s.q.insertBlock, tag, b.First, b.Last)
		return err
	})
}

// checkStep reads the step back: a Leaf table's INT column cannot keep a step
// above 2^31-1, and MySQL outside strict mode cuts it down with only a warning.
func (s *Store) checkStep(ctx context.Context, tx *sql.Tx, tag string, step int64) error {
	var got int64
	if err := tx.QueryRowContext(ctx, s.q.readStep, tag).Scan(&got); err != nil {
		return err
	}
	if got != step {
		return fmt.Errorf("step %d is stored as %d", step, got)
	}
	return nil
}

// stepErr explains an error writing a step that does not fit in an INT column: an
// engine's out-of-range error, or the read-back of checkStep. A step up to 2^31-1
// fits every column.
func (s *Store) stepErr(err error, step int64) error {
	if err == nil || step <= math.MaxInt32 || errors.Is(err, segment.ErrUnknownTag) || errors.Is(err, segment.ErrTagExists) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, s.narrowStep())
}

func (s *Store) narrowStep() string {
	return fmt.Sprintf("a step above 2^31-1 needs a BIGINT step column, and %s's is narrower, as Leaf's INT is; widen it with %s, or use a smaller step",
		s.h.Table, s.Dialect().widenStep(s.h.Table))
}

// SetStep implements segment.Store.
func (s *Store) SetStep(ctx context.Context, tag string, step int64) (err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckSetStep(tag, step); err != nil {
		return err
	}
	return s.stepErr(s.inTx(ctx, fmt.Sprintf("set the step of tag %s to %d", tag, step), func(tx *sql.Tx) error {
		if _, err := s.lock(ctx, tx, tag); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.setStep, step, tag); err != nil {
			return err
		}
		return s.checkStep(ctx, tx, tag, step)
	}), step)
}

// Create implements segment.Store. It writes max_id = t.Max+1 (Leaf's max_id is
// the next value to hand out) and removes rows a deleted tag of the same name left
// in the returned table.
func (s *Store) Create(ctx context.Context, t segment.Tag) (err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	desc := sql.NullString{String: t.Description, Valid: t.Description != ""}
	return s.stepErr(s.inTx(ctx, "create tag "+t.Name, func(tx *sql.Tx) error {
		maxID := t.Max + 1
		if t.Max == math.MaxInt64 {
			maxID = t.Max // setMax below adds the top mark
		}
		res, err := tx.ExecContext(ctx, s.q.insertTag, t.Name, maxID, t.Step, desc)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("segment/sqlstore: tag %s in %s: %w", t.Name, s.h.Table, segment.ErrTagExists)
		}
		// The tag did not exist, so whatever its name has in the returned table was
		// left by a tag deleted by hand: its values may be issued again now.
		var left int64
		if err := tx.QueryRowContext(ctx, s.q.countReturned, t.Name).Scan(&left); err != nil {
			return err
		}
		if left > 0 {
			if _, err := tx.ExecContext(ctx, s.q.clearReturned, t.Name); err != nil {
				return err
			}
		}
		if t.Max == math.MaxInt64 {
			if err := s.setMax(ctx, tx, t.Name, t.Max); err != nil {
				return err
			}
		}
		return s.checkStep(ctx, tx, t.Name, t.Step)
	}), t.Step)
}

// Tags implements segment.Store. Updated is update_time, written by the database's
// clock; Returned sums the blocks waiting in the returned table.
func (s *Store) Tags(ctx context.Context) (_ []segment.Tag, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	return listTags(ctx, s.h, s.q.list, func(rows *sql.Rows) (segment.Tag, error) {
		var (
			t       segment.Tag
			maxID   int64
			desc    sql.NullString
			updated sql.NullInt64
			top     int64
		)
		if err := rows.Scan(&t.Name, &maxID, &t.Step, &desc, &updated, &top, &t.Returned); err != nil {
			return t, err
		}
		t.Max = max(maxID-1, 0)
		if maxID == math.MaxInt64 && top > 0 {
			t.Max = math.MaxInt64
		}
		t.Description = desc.String
		if updated.Valid {
			t.Updated = time.UnixMilli(updated.Int64).UTC()
		}
		return t, nil
	})
}

// LeafAllocs lists the tag table's rows as Leaf's server reads them for its /db
// page (see LeafTable.LeafAllocs); the table has Leaf's columns.
func (s *Store) LeafAllocs(ctx context.Context) (_ []segment.LeafAlloc, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	return leafAllocs(ctx, s.h, s.q.allocs)
}

// listTags makes the tables if needed, reads the tags with query and scan, and
// sorts them by name: by bytes, as Go compares strings, whatever the column's
// collation.
func listTags(ctx context.Context, h *sqlconn.Handle, query string, scan func(*sql.Rows) (segment.Tag, error)) ([]segment.Tag, error) {
	if err := h.Ensure(ctx); err != nil {
		return nil, err
	}
	out, err := sqlconn.QueryAll(ctx, h, query, scan)
	if err != nil {
		return nil, fmt.Errorf("segment/sqlstore: list the tags of %s: %w", h.Table, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
