package sqlconn

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// A Table is one table a store keeps.
type Table struct {
	Name   string
	Create string // CREATE TABLE IF NOT EXISTS ...; empty with Schema.SkipCreate
	Probe  string // a query that fails unless the table has every column the store uses
	// Added lists the columns added to the table since its first form, oldest
	// first: Ensure adds each one a table made by an older flurry lacks (unless
	// SkipCreate). Create makes them all.
	Added []Column
}

// A Column is a column added to a table after its first form.
type Column struct {
	Name  string
	Probe string // a query that fails unless the table has the column
	Add   string // ALTER TABLE ... ADD COLUMN ..., with a default for the rows there
}

// Schema makes a store's tables on first use, once per store. The zero Schema has
// no tables.
type Schema struct {
	Tables []Table
	// SkipCreate only probes: the tables must exist.
	SkipCreate bool

	mu    sync.Mutex // guards ready
	ready bool       // the tables are known to exist
}

// Ensure creates the tables that are missing and checks their columns, until it has
// succeeded once.
func (s *Schema) Ensure(ctx context.Context, db *sql.DB) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	for _, t := range s.Tables {
		if !s.SkipCreate {
			err := Retry(ctx, func() error {
				_, err := db.ExecContext(ctx, t.Create)
				for i := 0; i < 3 && err != nil && createRace(err); i++ {
					// Another session created the table at the same moment: look again.
					_, err = db.ExecContext(ctx, t.Create)
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("create table %s: %w", t.Name, err)
			}
		}
		for _, c := range t.Added {
			if s.SkipCreate {
				break
			}
			if err := addColumn(ctx, db, c); err != nil {
				return fmt.Errorf("add column %s to table %s: %w", c.Name, t.Name, err)
			}
		}
		if err := Retry(ctx, func() error {
			rows, err := db.QueryContext(ctx, t.Probe)
			if err != nil {
				return err
			}
			return rows.Close()
		}); err != nil {
			if s.SkipCreate && probe(ctx, db, "SELECT 1 FROM "+t.Name+" WHERE 1 = 0") == nil {
				// A table of an older flurry: only the operator can add the column.
				for _, c := range t.Added {
					if cerr := probe(ctx, db, c.Probe); cerr != nil {
						return fmt.Errorf("table %s lacks the column %s, which this flurry needs: add it with %s: %w", t.Name, c.Name, c.Add, cerr)
					}
				}
			}
			return fmt.Errorf("table %s is missing or lacks the documented columns: %w", t.Name, err)
		}
	}
	s.ready = true
	return nil
}

// addColumn adds c when the table lacks it. Engines differ in how they refuse a
// column that exists (MySQL has no ADD COLUMN IF NOT EXISTS), so it probes first,
// and after a failed ALTER probes again: another process may have added the column
// at the same moment.
func addColumn(ctx context.Context, db *sql.DB, c Column) error {
	if probe(ctx, db, c.Probe) == nil {
		return nil
	}
	return Retry(ctx, func() error {
		_, err := db.ExecContext(ctx, c.Add)
		if err != nil && probe(ctx, db, c.Probe) == nil {
			return nil
		}
		return err
	})
}

// probe runs a query that fails unless a table has the columns it names.
func probe(ctx context.Context, db *sql.DB, query string) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	return rows.Close()
}
