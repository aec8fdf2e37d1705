//go:build race

package checker

// raceEnabled is true under the race detector, which makes every memory access
// several times slower; the volume test shrinks to stay bounded.
const raceEnabled = true
