//go:build flurry_full || flurry_sql

package buildtags

const sqlBuilt = true
