//go:build flurry_full || flurry_sql

package main

import (
	"github.com/flurryid/flurry/internal/sqlconn"
)

// sqlitePath returns the file a sqlite: URL names.
func sqlitePath(rawURL string) (string, bool) {
	c, err := sqlconn.Parse(rawURL, sqlconn.ParseOptions{Keys: []string{"schema"}})
	if err != nil || c.Engine != sqlconn.SQLite {
		return "", false
	}
	return c.SQLitePath, true
}
