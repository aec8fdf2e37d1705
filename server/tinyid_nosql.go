//go:build !(flurry_full || flurry_sql)

package server

import "github.com/flurryid/flurry/segment"

// asTinyStore: tinyid's tables are SQL tables, which a build without flurry_sql
// cannot open (their URLs fail before this with the tag to build with).
func asTinyStore(segment.Store) (tinyStore, bool) { return nil, false }
