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
		if err := Retry(ctx, func() error {
			rows, err := db.QueryContext(ctx, t.Probe)
			if err != nil {
				return err
			}
			return rows.Close()
		}); err != nil {
			return fmt.Errorf("table %s is missing or lacks the documented columns: %w", t.Name, err)
		}
	}
	s.ready = true
	return nil
}
