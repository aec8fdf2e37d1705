// Package suggest finds the word a user most likely meant, for "did you mean"
// in messages about a misspelt name (a layout preset, a configuration key).
package suggest

import "strings"

// Closest returns the candidate nearest to word, case aside, if it is near
// enough to be a slip: at most two edits (insertions, deletions, substitutions
// or swaps of neighbours) away, and fewer than half of word's letters. Ties go
// to the earlier candidate.
func Closest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(word)
	best, bestD := "", 3
	for _, c := range candidates {
		if d := distance(w, strings.ToLower(c)); d < bestD && 2*d < len([]rune(w)) {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// distance is the optimal string alignment distance between a and b: the
// fewest insertions, deletions, substitutions and swaps of two neighbouring
// letters that turn a into b.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
