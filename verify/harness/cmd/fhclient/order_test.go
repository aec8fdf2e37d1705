package main

import (
	"slices"
	"testing"
)

// TestServerOrder: with -local, every Client lists its region's servers first
// (rotated by its seed, so that they do not all start on one) and the other
// region's after them; without it, all of them in one rotation.
func TestServerOrder(t *testing.T) {
	urls := []string{"a1", "a2", "a3", "b1", "b2", "b3"}
	for seed := uint64(0); seed < 6; seed++ {
		got := serverOrder(urls, 3, seed)
		if len(got) != 6 {
			t.Fatalf("seed %d: %v", seed, got)
		}
		for i, u := range got {
			if local := u[0] == 'a'; local != (i < 3) {
				t.Errorf("seed %d: %v: the local servers must come first", seed, got)
				break
			}
		}
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		if !slices.Equal(sorted, urls) {
			t.Errorf("seed %d: %v is not every server once", seed, got)
		}
	}
	if a, b := serverOrder(urls, 3, 0)[0], serverOrder(urls, 3, 1)[0]; a == b {
		t.Errorf("seeds 0 and 1 start on the same server %s", a)
	}
	if got, want := serverOrder(urls, 0, 2), []string{"a3", "b1", "b2", "b3", "a1", "a2"}; !slices.Equal(got, want) {
		t.Errorf("no -local: %v, want %v", got, want)
	}
	if got, want := serverOrder(urls, 3, 4), []string{"a2", "a3", "a1", "b2", "b3", "b1"}; !slices.Equal(got, want) {
		t.Errorf("-local 3, seed 4: %v, want %v", got, want)
	}
}
