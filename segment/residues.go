package segment

import "fmt"

// MaxModulus is the largest number of residue classes an allocator takes.
const MaxModulus = 1024

// CheckResidues checks the residue classes of n stores (Options.Residues and
// Options.Modulus) and returns them filled in: nil residues mean 0..n-1, a zero
// modulus means n. Every residue must be distinct and below the modulus, so
// that no two stores can yield one ID.
func CheckResidues(n int, residues []int64, modulus int64) ([]int64, int64, error) {
	if modulus == 0 {
		modulus = int64(n)
	}
	if modulus < int64(n) || modulus > MaxModulus {
		return nil, 0, fmt.Errorf("segment: modulus %d must be from the number of stores, %d, to %d", modulus, n, MaxModulus)
	}
	if residues == nil {
		residues = make([]int64, n)
		for k := range residues {
			residues[k] = int64(k)
		}
		return residues, modulus, nil
	}
	if len(residues) != n {
		return nil, 0, fmt.Errorf("segment: %d residues for %d stores: give one residue per store", len(residues), n)
	}
	seen := map[int64]int{}
	for k, r := range residues {
		if r < 0 || r >= modulus {
			return nil, 0, fmt.Errorf("segment: residue %d of store %d is outside 0..%d (modulus %d)", r, k+1, modulus-1, modulus)
		}
		if j, dup := seen[r]; dup {
			return nil, 0, fmt.Errorf("segment: stores %d and %d both have residue %d: they would yield the same IDs", j+1, k+1, r)
		}
		seen[r] = k
	}
	return append([]int64(nil), residues...), modulus, nil
}
