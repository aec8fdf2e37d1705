//go:build flurry_sql || flurry_full

package main

// The SQL engines (SQLite, PostgreSQL, MySQL/MariaDB) for lease and segment store
// URLs, and the Leaf and tinyid tables: they register themselves with leaseurl
// and segmenturl when imported. docs/building.md lists the tags.
import (
	_ "github.com/flurryid/flurry/lease/sqlstore"
	_ "github.com/flurryid/flurry/segment/sqlstore"
)
