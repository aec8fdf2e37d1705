//go:build race

package objectid

const raceEnabled = true
