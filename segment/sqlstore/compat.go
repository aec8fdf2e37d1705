package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// Schemas a URL's schema= key, or Options.Schema, selects (see OpenAny).
const (
	// SchemaFlurry is the default: a Leaf-form tag table plus NAME_returned.
	SchemaFlurry = "flurry"
	// SchemaLeaf serves Meituan Leaf's leaf_alloc with Leaf's own privileges.
	SchemaLeaf = "leaf"
	// SchemaTinyID serves didi tinyid's tiny_id_info.
	SchemaTinyID = "tinyid"
)

// TinyIDTable is the table tinyid keeps its biz types in; table=tiny_id_info
// selects SchemaTinyID by itself.
const TinyIDTable = "tiny_id_info"

// LeafTable is a segment.Store on Meituan Leaf's leaf_alloc table that needs only
// the privileges a Leaf server has: SELECT and UPDATE on that one table. It creates
// no table and writes no other table. What it gives up, beside the default Store:
//
//   - Return cannot park a block for later. It rewinds max_id instead when nothing
//     was taken from the tag since the block (UPDATE ... WHERE max_id = the block's
//     end + 1): a graceful restart of a lone server loses nothing. When another
//     server (flurry or Leaf) took a range since, the returned values are skipped,
//     never issued twice, as Leaf skips its whole buffer on every restart.
//   - A tag cannot reach 2^63-1: max_id is the next value, and it stops one short.
//   - Create needs INSERT, which Leaf's account may not have: create tags as Leaf
//     users do, with an INSERT by hand.
type LeafTable struct {
	h       *sqlconn.Handle
	dialect Dialect
	q       leafQueries
}

var _ segment.Store = (*LeafTable)(nil)

type leafQueries struct {
	probe, lock, advance, rewind, insert, setStep, readStep, list, allocs string
}

func leafTableQueries(d Dialect, table string) leafQueries {
	now := d.now()
	q := leafQueries{
		probe:    "SELECT biz_tag, max_id, step, description, update_time FROM " + table + " WHERE 1 = 0",
		lock:     "SELECT max_id, step FROM " + table + " WHERE biz_tag = ? FOR UPDATE",
		advance:  "UPDATE " + table + " SET max_id = ?, update_time = " + now + " WHERE biz_tag = ?",
		rewind:   "UPDATE " + table + " SET max_id = ?, update_time = " + now + " WHERE biz_tag = ? AND max_id = ?",
		insert:   "INSERT INTO " + table + " (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, " + now + ")",
		setStep:  "UPDATE " + table + " SET step = ?, update_time = " + now + " WHERE biz_tag = ?",
		readStep: "SELECT step FROM " + table + " WHERE biz_tag = ?",
		list:     "SELECT biz_tag, max_id, step, description FROM " + table,
		allocs:   "SELECT biz_tag, max_id, step, update_time FROM " + table, // IDAllocMapper.getAllLeafAllocs
	}
	if d == SQLite {
		q.lock = "UPDATE " + table + " SET max_id = max_id WHERE biz_tag = ? RETURNING max_id, step"
	}
	sqlconn.Placeholders(sqlconn.Engine(d), &q.lock, &q.advance, &q.rewind, &q.insert, &q.setStep, &q.readStep)
	return q
}

// OpenLeafTable opens a LeafTable; an empty o.Table means leaf_alloc. The table
// must exist with Leaf's columns; o.SkipCreate is implied.
func OpenLeafTable(ctx context.Context, o Options) (*LeafTable, error) {
	h, err := sqlconn.OpenHandle(ctx, o.probeOnly("leaf_alloc", func(d Dialect, table string) string {
		return leafTableQueries(d, table).probe
	}))
	if err != nil {
		return nil, err
	}
	d := Dialect(h.Engine)
	return &LeafTable{h: h, dialect: d, q: leafTableQueries(d, h.Table)}, nil
}

// Close closes the store's connections.
func (s *LeafTable) Close() error { return s.h.Close() }

// DB returns the store's database handle.
func (s *LeafTable) DB() *sql.DB { return s.h.DB }

func (s *LeafTable) inTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	err := s.h.InTx(ctx, fn)
	if err == nil || errors.Is(err, segment.ErrUnknownTag) || errors.Is(err, segment.ErrExhausted) || errors.Is(err, segment.ErrTagExists) {
		return err
	}
	return fmt.Errorf("segment/sqlstore: %s in %s: %w", what, s.h.Table, err)
}

// Take implements segment.Store: it locks the tag's row, as Leaf's own UPDATE
// does, and raises max_id past n values above max(max_id-1, floor).
func (s *LeafTable) Take(ctx context.Context, tag string, n, floor, limit int64) (segment.Block, error) {
	limit, err := segmentstore.CheckTake(tag, n, floor, limit)
	if err != nil {
		return segment.Block{}, err
	}
	// max_id is the next value and cannot pass 2^63-1.
	limit = min(limit, math.MaxInt64-1)
	var b segment.Block
	err = s.inTx(ctx, "take from tag "+tag, func(tx *sql.Tx) error {
		var maxID, step int64
		err := tx.QueryRowContext(ctx, s.q.lock, tag).Scan(&maxID, &step)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("segment/sqlstore: tag %s in %s: %w", tag, s.h.Table, segment.ErrUnknownTag)
		}
		if err != nil {
			return err
		}
		fresh, err := segmentstore.FreshBlock(max(maxID-1, 0), floor, n, limit)
		if err != nil {
			return fmt.Errorf("segment/sqlstore: tag %s: %w; move to a new tag", tag, err)
		}
		b = segment.Block{First: fresh.First, Last: fresh.Last, Step: step}
		_, err = tx.ExecContext(ctx, s.q.advance, b.Last+1, tag)
		return err
	})
	if err != nil {
		return segment.Block{}, err
	}
	return b, nil
}

// Return implements segment.Store by rewinding max_id to b.First when it is still
// b.Last+1; otherwise the values are skipped (see LeafTable).
func (s *LeafTable) Return(ctx context.Context, tag string, b segment.Block) error {
	if err := segmentstore.CheckReturn(tag, b); err != nil {
		return err
	}
	if err := s.h.Ensure(ctx); err != nil {
		return err
	}
	return sqlconn.Retry(ctx, func() error {
		_, err := s.h.DB.ExecContext(ctx, s.q.rewind, b.First, tag, b.Last+1)
		return err
	})
}

// Create implements segment.Store (it needs INSERT on the table).
func (s *LeafTable) Create(ctx context.Context, t segment.Tag) error {
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	if t.Max >= math.MaxInt64-1 {
		return fmt.Errorf("segment/sqlstore: tag %s: start %d leaves no value below 2^63-1", t.Name, t.Max)
	}
	desc := sql.NullString{String: t.Description, Valid: t.Description != ""}
	return s.inTx(ctx, "create tag "+t.Name, func(tx *sql.Tx) error {
		var one int64
		err := tx.QueryRowContext(ctx, s.q.readStep, t.Name).Scan(&one)
		if err == nil {
			return fmt.Errorf("segment/sqlstore: tag %s in %s: %w", t.Name, s.h.Table, segment.ErrTagExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q.insert, t.Name, t.Max+1, t.Step, desc)
		return err
	})
}

// SetStep implements segment.Store.
func (s *LeafTable) SetStep(ctx context.Context, tag string, step int64) error {
	if err := segmentstore.CheckSetStep(tag, step); err != nil {
		return err
	}
	return s.inTx(ctx, "set the step of tag "+tag, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q.setStep, step, tag)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("segment/sqlstore: tag %s in %s: %w", tag, s.h.Table, segment.ErrUnknownTag)
		}
		return nil
	})
}

// Tags implements segment.Store; Updated is left zero and Returned is always 0.
func (s *LeafTable) Tags(ctx context.Context) ([]segment.Tag, error) {
	return listTags(ctx, s.h, s.q.list, func(rows *sql.Rows) (segment.Tag, error) {
		var t segment.Tag
		var maxID int64
		var desc sql.NullString
		err := rows.Scan(&t.Name, &maxID, &t.Step, &desc)
		t.Max, t.Description = max(maxID-1, 0), desc.String
		return t, err
	})
}

// LeafAllocs lists the table's rows as Leaf's server reads them for its /db page
// and its tag list: Leaf's own statement, so the rows come in the order the
// database gives them to Leaf (the primary key's, in MySQL and MariaDB).
func (s *LeafTable) LeafAllocs(ctx context.Context) ([]segment.LeafAlloc, error) {
	return leafAllocs(ctx, s.h, s.q.allocs)
}

func leafAllocs(ctx context.Context, h *sqlconn.Handle, query string) ([]segment.LeafAlloc, error) {
	if err := h.Ensure(ctx); err != nil {
		return nil, err
	}
	out, err := sqlconn.QueryAll(ctx, h, query, func(rows *sql.Rows) (segment.LeafAlloc, error) {
		var a segment.LeafAlloc
		var upd any
		err := rows.Scan(&a.Tag, &a.MaxID, &a.Step, &upd)
		a.UpdateTime = javaTimestamp(upd)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("segment/sqlstore: list the rows of %s: %w", h.Table, err)
	}
	return out, nil
}

// javaTimestamp writes a timestamp column's value as Leaf shows it: MySQL
// Connector/J's getString gives java.sql.Timestamp.toString of the column's wall
// clock in the session's time zone, "2019-09-06 09:35:00.0", the fraction's
// trailing zeros cut but one digit kept. The drivers here give that wall clock
// as a time.Time (MySQL's and PostgreSQL's timestamp), or text (SQLite).
func javaTimestamp(v any) string {
	var t time.Time
	switch v := v.(type) {
	case time.Time:
		t = v
	case []byte:
		return javaTimestamp(string(v))
	case string:
		var err error
		for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"} {
			if t, err = time.Parse(layout, v); err == nil {
				break
			}
		}
		if err != nil {
			return v
		}
	default:
		return ""
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", t.Nanosecond()), "0")
	if frac == "" {
		frac = "0"
	}
	return t.Format("2006-01-02 15:04:05") + "." + frac
}
