//go:build !(flurry_full || flurry_sql)

package main

// sqlitePath finds no SQLite file in a build without SQLite: opening the URL fails
// with the tag to build with.
func sqlitePath(string) (string, bool) { return "", false }
